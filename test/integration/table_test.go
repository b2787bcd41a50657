package integration

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// getTable does req, a GET, asking for a meta.k8s.io/v1 Table.
func getTable(t testing.TB, req *rest.Request) *metav1.Table {
	t.Helper()
	path := req.URL().String()
	raw, err := req.SetHeader("Accept", tableAccept).Do(testContext(t)).Raw()
	if err != nil {
		t.Fatalf("GET %s as Table: %v", path, err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(raw, table); err != nil {
		t.Fatalf("decoding Table from %s: %v\n%s", path, err, raw)
	}
	if table.Kind != "Table" || table.APIVersion != "meta.k8s.io/v1" {
		t.Fatalf("GET %s returned %s %s, want meta.k8s.io/v1 Table", path, table.APIVersion, table.Kind)
	}
	return table
}

type wantColumn struct {
	name     string
	typ      string
	priority int32
}

func checkColumns(t testing.TB, table *metav1.Table, want []wantColumn) {
	t.Helper()
	var got []wantColumn
	for _, c := range table.ColumnDefinitions {
		got = append(got, wantColumn{c.Name, c.Type, c.Priority})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns = %+v, want %+v", got, want)
	}
}

// rowByName returns the cells of the row whose first cell is name, with JSON numbers as int64.
func rowByName(t testing.TB, table *metav1.Table, name string) []interface{} {
	t.Helper()
	for _, row := range table.Rows {
		if len(row.Cells) > 0 && row.Cells[0] == name {
			cells := make([]interface{}, len(row.Cells))
			for i, c := range row.Cells {
				if f, ok := c.(float64); ok {
					cells[i] = int64(f)
				} else {
					cells[i] = c
				}
			}
			return cells
		}
	}
	t.Fatalf("table has no row named %s (%d rows)", name, len(table.Rows))
	return nil
}

// checkCells checks a row printed as kubectl does for built-in workloads: the name and normal cells (normal),
// then Age, then the wide cells (wide). Age is checked to be a duration, the others exactly.
func checkCells(t testing.TB, what string, got []interface{}, normal, wide []interface{}) {
	t.Helper()
	if len(got) != len(normal)+1+len(wide) {
		t.Errorf("%s: %d cells %#v, want %d, Age, then %d", what, len(got), got, len(normal), len(wide))
		return
	}
	if !reflect.DeepEqual(got[:len(normal)], normal) {
		t.Errorf("%s: cells before Age = %#v, want %#v", what, got[:len(normal)], normal)
	}
	if age, ok := got[len(normal)].(string); !ok || age == "" || age == "<unknown>" {
		t.Errorf("%s: age cell (index %d) = %#v, want a duration", what, len(normal), got[len(normal)])
	}
	if rest := got[len(normal)+1:]; !reflect.DeepEqual(rest, wide) {
		t.Errorf("%s: cells after Age = %#v, want %#v", what, rest, wide)
	}
}

func TestTableOutput(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	rc := cs.TKEStackAppsV1().RESTClient()

	// A TApp with status, and one whose default template is a pool entry.
	tapps := cs.TKEStackAppsV1().TApps(ns)
	web, err := tapps.Create(ctx, newTApp(ns, "web", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create web: %v", err)
	}
	web.Status.Replicas = 3
	web.Status.ReadyReplicas = 2
	web.Status.AppStatus = "Running"
	if _, err := tapps.UpdateStatus(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	canary := newTApp(ns, "canary", 1)
	canary.Spec.Template.Spec.Containers = append(canary.Spec.Template.Spec.Containers, corev1.Container{Name: "log", Image: "fluentd:1"})
	canary.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{
		"next": {
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "canary"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:next"}}},
		},
	}
	canary.Spec.DefaultTemplateName = "next"
	if _, err := tapps.Create(ctx, canary, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create canary: %v", err)
	}

	table := getTable(t, rc.Get().AbsPath(fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)))
	checkColumns(t, table, []wantColumn{
		{"Name", "string", 0},
		{"Desired", "integer", 0},
		{"Current", "integer", 0},
		{"Ready", "integer", 0},
		{"AppStatus", "string", 0},
		{"Age", "string", 0},
		{"Images", "string", 1},
		{"Selector", "string", 1},
		{"Available", "integer", 1},
		{"Revision", "string", 1},
	})
	if len(table.Rows) != 2 {
		t.Errorf("tapps table has %d rows, want 2", len(table.Rows))
	}
	if table.ResourceVersion == "" {
		t.Errorf("list table has no resourceVersion")
	}
	checkCells(t, "tapp web", rowByName(t, table, "web"),
		[]interface{}{"web", int64(3), int64(3), int64(2), "Running"}, []interface{}{"nginx:1.7.9", "app=web", int64(0), "<none>"})
	checkCells(t, "tapp canary", rowByName(t, table, "canary"),
		[]interface{}{"canary", int64(1), int64(0), int64(0), "<none>"}, []interface{}{"nginx:next", "app=canary", int64(0), "<none>"})

	// A single object, with the object embedded as metadata.
	single := getTable(t, rc.Get().AbsPath(fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps/web", ns)))
	if len(single.Rows) != 1 {
		t.Fatalf("single tapp table has %d rows, want 1", len(single.Rows))
	}
	checkCells(t, "single tapp web", rowByName(t, single, "web"),
		[]interface{}{"web", int64(3), int64(3), int64(2), "Running"}, []interface{}{"nginx:1.7.9", "app=web", int64(0), "<none>"})
	var partial metav1.PartialObjectMetadata
	if err := json.Unmarshal(single.Rows[0].Object.Raw, &partial); err != nil {
		t.Fatalf("decoding row object: %v", err)
	}
	if partial.Kind != "PartialObjectMetadata" || partial.Name != "web" || partial.UID != web.UID {
		t.Errorf("row object = %s %s uid %s, want PartialObjectMetadata web uid %s", partial.Kind, partial.Name, partial.UID, web.UID)
	}

	// includeObject=Object embeds the full versioned object.
	full := getTable(t, rc.Get().AbsPath(fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps/web", ns)).Param("includeObject", "Object"))
	if len(full.Rows) != 1 {
		t.Fatalf("includeObject=Object table has %d rows, want 1", len(full.Rows))
	}
	var embedded tkestackv1.TApp
	if err := json.Unmarshal(full.Rows[0].Object.Raw, &embedded); err != nil {
		t.Fatalf("decoding embedded object: %v", err)
	}
	if embedded.Kind != "TApp" || embedded.APIVersion != "apps.tkestack.io/v1" || embedded.Spec.Replicas != 3 || embedded.Status.AppStatus != "Running" {
		t.Errorf("embedded object = %s %s replicas=%d appStatus=%q, want apps.tkestack.io/v1 TApp with replicas 3 and Running",
			embedded.APIVersion, embedded.Kind, embedded.Spec.Replicas, embedded.Status.AppStatus)
	}

	// YurtAppDaemons.
	yads := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns)
	yad, err := yads.Create(ctx, newYurtAppDaemon(ns, "yad"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create yad: %v", err)
	}
	yad.Status.NodePools = []string{"a", "b", "c"}
	if _, err := yads.UpdateStatus(ctx, yad, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("yad update status: %v", err)
	}
	table = getTable(t, rc.Get().AbsPath(fmt.Sprintf("/apis/apps.openyurt.io/v1alpha1/namespaces/%s/yurtappdaemons", ns)))
	checkColumns(t, table, []wantColumn{
		{"Name", "string", 0},
		{"WorkloadTemplate", "string", 0},
		{"NodePools", "integer", 0},
		{"Age", "string", 0},
		{"Selector", "string", 1},
		{"NodePoolSelector", "string", 1},
	})
	checkCells(t, "yad", rowByName(t, table, "yad"),
		[]interface{}{"yad", "Deployment", int64(3)}, []interface{}{"app=yad", "pool=edge"})

	// NodePools.
	pools := cs.OpenYurtAppsV1alpha1().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = pools.Delete(ctx, name, metav1.DeleteOptions{}) })
	pool, err := pools.Create(ctx, newNodePool(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pool: %v", err)
	}
	pool.Status.ReadyNodeNum = 2
	pool.Status.UnreadyNodeNum = 1
	if _, err := pools.UpdateStatus(ctx, pool, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pool update status: %v", err)
	}
	// The same columns and cells in every version.
	for _, version := range []string{"v1alpha1", "v1beta1", "v1beta2"} {
		table = getTable(t, rc.Get().AbsPath("/apis/apps.openyurt.io/"+version+"/nodepools/"+name))
		checkColumns(t, table, []wantColumn{
			{"Name", "string", 0},
			{"Type", "string", 0},
			{"ReadyNodes", "integer", 0},
			{"NotReadyNodes", "integer", 0},
			{"LeaderNodes", "string", 0},
			{"LeaderElectionAge", "string", 0},
			{"Age", "string", 0},
			{"Selector", "string", 1},
		})
		checkCells(t, "nodepool "+version, rowByName(t, table, name),
			[]interface{}{name, "Edge", int64(2), int64(1), "", ""}, []interface{}{"apps.openyurt.io/nodepool=" + name})
		table = getTable(t, rc.Get().AbsPath("/apis/apps.openyurt.io/"+version+"/nodepools").Param("fieldSelector", "metadata.name="+name))
		if len(table.Rows) != 1 {
			t.Errorf("%s nodepools list table filtered by name has %d rows, want 1", version, len(table.Rows))
		}
	}

	// The scale subresource prints with the default columns.
	table = getTable(t, rc.Get().AbsPath(fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps/web/scale", ns)))
	if len(table.Rows) != 1 || len(table.ColumnDefinitions) == 0 || table.Rows[0].Cells[0] != "web" {
		t.Errorf("scale table = %+v, want one row named web", table)
	}

	// Table output of the status subresource matches the main resource.
	table = getTable(t, rc.Get().AbsPath(fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps/web/status", ns)))
	checkCells(t, "tapp web status", rowByName(t, table, "web"),
		[]interface{}{"web", int64(3), int64(3), int64(2), "Running"}, []interface{}{"nginx:1.7.9", "app=web", int64(0), "<none>"})
}
