package integration

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	openyurtv1beta1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	openyurtv1beta1ac "github.com/tapp-io/tapp-apiserver/pkg/generated/applyconfiguration/openyurt/v1beta1"
)

func newYurtAppSet(ns, name string) *openyurtv1beta1.YurtAppSet {
	labels := map[string]string{"app": name}
	return &openyurtv1beta1.YurtAppSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: openyurtv1beta1.YurtAppSetSpec{
			Pools: []string{"hangzhou"},
			Workload: openyurtv1beta1.Workload{
				WorkloadTemplate: openyurtv1beta1.WorkloadTemplate{DeploymentTemplate: &openyurtv1beta1.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: appsv1.DeploymentSpec{
						Selector: &metav1.LabelSelector{MatchLabels: labels},
						Template: corev1.PodTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: labels},
							Spec: corev1.PodSpec{Containers: []corev1.Container{{
								Name: "nginx", Image: "nginx:1.19", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
							}}},
						},
					},
				}},
				WorkloadTweaks: []openyurtv1beta1.WorkloadTweak{{
					Pools: []string{"hangzhou"},
					Tweaks: openyurtv1beta1.Tweaks{
						Replicas:        ptr.To[int32](3),
						ContainerImages: []openyurtv1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.20"}},
						Patches: []openyurtv1beta1.Patch{
							{Path: "/metadata/labels/pool", Operation: openyurtv1beta1.PatchOperationAdd,
								Value: &apiextensionsv1.JSON{Raw: []byte(`"{{nodepool-name}}"`)}},
							{Path: "/spec/template/spec/containers/0/env", Operation: openyurtv1beta1.PatchOperationAdd,
								Value: &apiextensionsv1.JSON{Raw: []byte(`[{"name":"A","value":"1"}]`)}},
						},
					},
				}},
			},
		},
	}
}

// TestYurtAppSetCRUD: a YurtAppSet is created with its defaults and without a client's status, patch
// values of any JSON type come back as written, spec changes bump the generation, status is written
// through the status subresource only, and kubectl's table has OpenYurt's columns.
func TestYurtAppSetCRUD(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	yass := cs.OpenYurtAppsV1beta1().YurtAppSets(ns)

	in := newYurtAppSet(ns, "web")
	in.Status = openyurtv1beta1.YurtAppSetStatus{TotalWorkloads: 5, CurrentRevision: "forged"}
	created, err := yass.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Generation != 1 || created.Status.TotalWorkloads != 0 || created.Status.CurrentRevision != "" {
		t.Errorf("after create generation=%d status=%+v, want 1 and an empty status", created.Generation, created.Status)
	}
	if l := created.Spec.RevisionHistoryLimit; l == nil || *l != 10 {
		t.Errorf("spec.revisionHistoryLimit = %v, want the default 10", l)
	}
	if p := created.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Ports[0].Protocol; p != corev1.ProtocolTCP {
		t.Errorf("port protocol = %q, want the default TCP", p)
	}
	if !reflect.DeepEqual(created.Spec.Workload.WorkloadTweaks, in.Spec.Workload.WorkloadTweaks) {
		t.Errorf("tweaks came back as %+v, want %+v", created.Spec.Workload.WorkloadTweaks, in.Spec.Workload.WorkloadTweaks)
	}

	created.Spec.Workload.WorkloadTweaks[0].Tweaks.Replicas = ptr.To[int32](4)
	updated, err := yass.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.Generation != 2 {
		t.Errorf("generation after a tweak change = %d, want 2", updated.Generation)
	}
	updated.Labels = map[string]string{"team": "a"}
	if again, err := yass.Update(ctx, updated, metav1.UpdateOptions{}); err != nil || again.Generation != 2 {
		t.Errorf("a metadata-only update: generation %v, err %v; want 2", again.Generation, err)
	}

	got, err := yass.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status = openyurtv1beta1.YurtAppSetStatus{
		ObservedGeneration: 2, CurrentRevision: "web-5d8f7c9b", TotalWorkloads: 2, ReadyWorkloads: 1, UpdatedWorkloads: 2,
		Conditions: []openyurtv1beta1.YurtAppSetCondition{{Type: openyurtv1beta1.AppSetPoolFound, Status: corev1.ConditionTrue, Reason: "FoundPools"}},
	}
	got.Spec.Pools = []string{"changed-through-status"}
	withStatus, err := yass.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if withStatus.Status.TotalWorkloads != 2 || !slices.Equal(withStatus.Spec.Pools, []string{"hangzhou"}) {
		t.Errorf("after a status write status=%+v pools=%v, want the status written and the spec kept", withStatus.Status, withStatus.Spec.Pools)
	}
	withStatus.Status.TotalWorkloads = 9
	if kept, err := yass.Update(ctx, withStatus, metav1.UpdateOptions{}); err != nil || kept.Status.TotalWorkloads != 2 {
		t.Errorf("a main-resource write changed status: %v, %v", kept.Status.TotalWorkloads, err)
	}

	table := getTable(t, cs.OpenYurtAppsV1beta1().RESTClient().Get().Namespace(ns).Resource("yurtappsets"))
	checkColumns(t, table, []wantColumn{{"Name", "string", 0}, {"Total", "integer", 0}, {"Ready", "integer", 0},
		{"Updated", "integer", 0}, {"Age", "string", 0}, {"Workload", "string", 1}, {"NodePoolSelector", "string", 1}, {"Pools", "string", 1}})
	checkCells(t, "web", rowByName(t, table, "web"), []interface{}{"web", int64(2), int64(1), int64(2)},
		[]interface{}{"Deployment", "<none>", "hangzhou"})

	if err := yass.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := yass.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
}

func yasApply(ns, name string, pools []string, tweaks ...*openyurtv1beta1ac.WorkloadTweakApplyConfiguration) *openyurtv1beta1ac.YurtAppSetApplyConfiguration {
	labels := map[string]string{"app": name}
	workload := openyurtv1beta1ac.Workload().WithWorkloadTemplate(openyurtv1beta1ac.WorkloadTemplate().
		WithDeploymentTemplate(openyurtv1beta1ac.DeploymentTemplateSpec().
			WithLabels(labels).
			WithSpec(appsv1ac.DeploymentSpec().
				WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
				WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).
					WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("nginx").WithImage("nginx:1.19")))))))
	if len(tweaks) > 0 {
		workload = workload.WithWorkloadTweaks(tweaks...)
	}
	return openyurtv1beta1ac.YurtAppSet(name, ns).WithSpec(openyurtv1beta1ac.YurtAppSetSpec().WithPools(pools...).WithWorkload(workload))
}

// TestYurtAppSetServerSideApply: spec.pools is a set (two managers' pools are kept together, each owning
// its own), workloadTweaks is atomic (another manager's tweaks conflict, and a forced apply replaces the
// list whole), containerImages are keyed by name.
func TestYurtAppSetServerSideApply(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	yass := cs.OpenYurtAppsV1beta1().YurtAppSets(ns)

	aliceTweak := openyurtv1beta1ac.WorkloadTweak().WithPools("hangzhou").WithTweaks(openyurtv1beta1ac.Tweaks().
		WithReplicas(3).
		WithContainerImages(openyurtv1beta1ac.ContainerImage().WithName("nginx").WithTargetImage("nginx:1.20")).
		WithPatches(openyurtv1beta1ac.Patch().WithPath("/metadata/labels/tier").WithOperation(openyurtv1beta1.PatchOperationAdd).
			WithValue(apiextensionsv1.JSON{Raw: []byte(`"edge"`)})))
	applied, err := yass.Apply(ctx, yasApply(ns, "ssa", []string{"hangzhou"}, aliceTweak), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply by alice: %v", err)
	}
	alice := managerEntry(applied.ManagedFields, "alice")
	if alice == nil || !fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:pools", `v:"hangzhou"`) ||
		!fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:workload", "f:workloadTweaks") {
		t.Fatalf("alice's managedFields = %+v, want the pool as a set member and the tweaks", applied.ManagedFields)
	}
	if fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:workload", "f:workloadTweaks", "k:{}") {
		t.Errorf("workloadTweaks is tracked item by item: %s", alice.FieldsV1.Raw)
	}

	// Bob adds a pool: a set merges it with alice's.
	bob, err := yass.Apply(ctx, openyurtv1beta1ac.YurtAppSet("ssa", ns).WithSpec(openyurtv1beta1ac.YurtAppSetSpec().WithPools("beijing")),
		metav1.ApplyOptions{FieldManager: "bob"})
	if err != nil {
		t.Fatalf("apply by bob: %v", err)
	}
	if !slices.Equal(bob.Spec.Pools, []string{"hangzhou", "beijing"}) {
		t.Errorf("pools after bob's apply = %v, want alice's and bob's", bob.Spec.Pools)
	}

	// Bob's tweaks conflict with alice's list; forced, they replace it whole.
	bobTweak := openyurtv1beta1ac.WorkloadTweak().WithPools("beijing").WithTweaks(openyurtv1beta1ac.Tweaks().WithReplicas(1))
	bobApply := openyurtv1beta1ac.YurtAppSet("ssa", ns).WithSpec(openyurtv1beta1ac.YurtAppSetSpec().
		WithWorkload(openyurtv1beta1ac.Workload().WithWorkloadTweaks(bobTweak)))
	_, err = yass.Apply(ctx, bobApply, metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "workloadTweaks") {
		t.Fatalf("bob's tweaks over alice's: %v, want a conflict on workloadTweaks", err)
	}
	forced, err := yass.Apply(ctx, bobApply, metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil {
		t.Fatalf("forced apply by bob: %v", err)
	}
	if tw := forced.Spec.Workload.WorkloadTweaks; len(tw) != 1 || !slices.Equal(tw[0].Pools, []string{"beijing"}) || *tw[0].Tweaks.Replicas != 1 {
		t.Errorf("tweaks after bob's forced apply = %+v, want bob's only", tw)
	}
	if forced.Generation != 3 {
		t.Errorf("generation = %d, want 3 (two spec changes)", forced.Generation)
	}

	// A bad tweak through apply is refused with its field and changes nothing.
	bad := openyurtv1beta1ac.YurtAppSet("ssa", ns).WithSpec(openyurtv1beta1ac.YurtAppSetSpec().WithWorkload(openyurtv1beta1ac.Workload().
		WithWorkloadTweaks(openyurtv1beta1ac.WorkloadTweak().WithPools("beijing").WithTweaks(openyurtv1beta1ac.Tweaks().
			WithContainerImages(openyurtv1beta1ac.ContainerImage().WithName("ghost").WithTargetImage("x:1"))))))
	_, err = yass.Apply(ctx, bad, metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.workload.workloadTweaks[0].tweaks.containerImages[0].name") {
		t.Errorf("apply naming a container the template lacks: %v, want 422 naming the image's name", err)
	}
	after, err := yass.Get(ctx, "ssa", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != forced.ResourceVersion {
		t.Errorf("a refused apply changed the object: %v (err %v)", after.ResourceVersion, err)
	}
}

// TestYurtAppSetExplain: the OpenAPI v3 document kubectl explain reads describes every YurtAppSet field and
// carries the list types server-side apply merges by.
func TestYurtAppSetExplain(t *testing.T) {
	s := sharedServer(t)
	code, body := httpGet(t, s.URL+"/openapi/v3/apis/apps.openyurt.io/v1beta1", "application/json")
	if code != http.StatusOK {
		t.Fatalf("openapi v3 of apps.openyurt.io/v1beta1: %d %.200s", code, body)
	}
	type property struct {
		Description string   `json:"description"`
		ListType    string   `json:"x-kubernetes-list-type"`
		MapKeys     []string `json:"x-kubernetes-list-map-keys"`
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Description string              `json:"description"`
				Properties  map[string]property `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	const prefix = "io.openyurt.apps.v1beta1."
	for _, typ := range []string{"YurtAppSet", "YurtAppSetSpec", "Workload", "WorkloadTemplate", "WorkloadTweak", "Tweaks",
		"ContainerImage", "Patch", "YurtAppSetStatus", "YurtAppSetCondition", "DeploymentTemplateSpec", "StatefulSetTemplateSpec"} {
		schema, ok := doc.Components.Schemas[prefix+typ]
		if !ok {
			t.Errorf("no schema %s", typ)
			continue
		}
		if schema.Description == "" {
			t.Errorf("%s has no description", typ)
		}
		for name, p := range schema.Properties {
			if p.Description == "" && name != "apiVersion" && name != "kind" {
				t.Errorf("%s.%s has no description: kubectl explain would show nothing", typ, name)
			}
		}
	}
	for _, c := range []struct {
		typ, field, listType string
		keys                 []string
	}{
		{"YurtAppSetSpec", "pools", "set", nil},
		{"WorkloadTweak", "pools", "set", nil},
		{"Workload", "workloadTweaks", "atomic", nil},
		{"Tweaks", "containerImages", "map", []string{"name"}},
		{"Tweaks", "patches", "atomic", nil},
		{"YurtAppSetStatus", "conditions", "map", []string{"type"}},
	} {
		p := doc.Components.Schemas[prefix+c.typ].Properties[c.field]
		if p.ListType != c.listType || !slices.Equal(p.MapKeys, c.keys) {
			t.Errorf("%s.%s list type %q keys %v, want %q %v", c.typ, c.field, p.ListType, p.MapKeys, c.listType, c.keys)
		}
	}
}
