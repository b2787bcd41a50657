package tapp

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func TestTableColumns(t *testing.T) {
	table, err := tableConvertor.ConvertToTable(context.Background(), validTApp(), &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var wide []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
		if c.Priority == 1 {
			wide = append(wide, c.Name)
		}
	}
	if want := []string{"Name", "Desired", "Current", "Ready", "AppStatus", "Age", "Images", "Selector", "Available", "Revision"}; !reflect.DeepEqual(names, want) {
		t.Errorf("columns = %v, want %v", names, want)
	}
	if want := []string{"Images", "Selector", "Available", "Revision"}; !reflect.DeepEqual(wide, want) {
		t.Errorf("wide columns = %v, want %v", wide, want)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != len(table.ColumnDefinitions) {
		t.Fatalf("rows = %+v, want one row with a cell per column", table.Rows)
	}

	table, err = tableConvertor.ConvertToTable(context.Background(), validTApp(), &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 0 || len(table.Rows) != 1 {
		t.Errorf("NoHeaders: columns %v rows %d, want no columns and one row", table.ColumnDefinitions, len(table.Rows))
	}
}

func TestTableRows(t *testing.T) {
	twoContainers := testPodTemplate("nginx:1")
	twoContainers.Spec.Containers = append(twoContainers.Spec.Containers, corev1.Container{Name: "side", Image: "busybox"})
	for _, tc := range []struct {
		name   string
		mutate func(*tkestack.TApp)
		want   []interface{}
	}{
		{name: "default template", mutate: func(*tkestack.TApp) {},
			want: []interface{}{"web", int64(2), int64(2), int64(1), "Running", "<unknown>", "nginx:1", "app=x", int64(0), "<none>"}},
		{name: "default template name points into the pool", mutate: func(a *tkestack.TApp) { a.Spec.DefaultTemplateName = "canary" },
			want: []interface{}{"web", int64(2), int64(2), int64(1), "Running", "<unknown>", "nginx:2", "app=x", int64(0), "<none>"}},
		{name: "empty default template name", mutate: func(a *tkestack.TApp) { a.Spec.DefaultTemplateName = "" },
			want: []interface{}{"web", int64(2), int64(2), int64(1), "Running", "<unknown>", "nginx:1", "app=x", int64(0), "<none>"}},
		{name: "pool entry named default is ignored", mutate: func(a *tkestack.TApp) {
			a.Spec.TemplatePool["default"] = testPodTemplate("shadow:1")
		}, want: []interface{}{"web", int64(2), int64(2), int64(1), "Running", "<unknown>", "nginx:1", "app=x", int64(0), "<none>"}},
		{name: "unknown default template name", mutate: func(a *tkestack.TApp) { a.Spec.DefaultTemplateName = "missing" },
			want: []interface{}{"web", int64(2), int64(2), int64(1), "Running", "<unknown>", "nginx:1", "app=x", int64(0), "<none>"}},
		{name: "several containers", mutate: func(a *tkestack.TApp) { a.Spec.Template = ptr.To(twoContainers) },
			want: []interface{}{"web", int64(2), int64(2), int64(1), "Running", "<unknown>", "nginx:1,busybox", "app=x", int64(0), "<none>"}},
		{name: "available instances and update revision", mutate: func(a *tkestack.TApp) {
			a.Status.AvailableReplicas = 1
			a.Status.UpdateRevision = "web-5d8f7c9b4"
		}, want: []interface{}{"web", int64(2), int64(2), int64(1), "Running", "<unknown>", "nginx:1", "app=x", int64(1), "web-5d8f7c9b4"}},
		{name: "no containers, no status, no selector", mutate: func(a *tkestack.TApp) {
			a.Spec.Template.Spec.Containers = nil
			a.Spec.Selector = nil
			a.Spec.Replicas = 0
			a.Status = tkestack.TAppStatus{}
		}, want: []interface{}{"web", int64(0), int64(0), int64(0), "<none>", "<unknown>", "", "<none>", int64(0), "<none>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tc.mutate(tapp)
			table, err := tableConvertor.ConvertToTable(context.Background(), tapp, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := table.Rows[0].Cells; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cells = %#v, want %#v", got, tc.want)
			}
			if table.Rows[0].Object.Object != tapp {
				t.Errorf("row object = %v, want the TApp", table.Rows[0].Object.Object)
			}
			if table.ResourceVersion != "5" {
				t.Errorf("resourceVersion = %q, want 5", table.ResourceVersion)
			}
		})
	}
}

func TestTableList(t *testing.T) {
	a, b := validTApp(), validTApp()
	b.Name = "api"
	b.Spec.Replicas = 9
	list := &tkestack.TAppList{ListMeta: metav1.ListMeta{ResourceVersion: "11", Continue: "next"}, Items: []tkestack.TApp{*a, *b}}
	table, err := tableConvertor.ConvertToTable(context.Background(), list, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 || table.Rows[0].Cells[0] != "web" || table.Rows[1].Cells[0] != "api" || table.Rows[1].Cells[1] != int64(9) {
		t.Errorf("rows = %+v", table.Rows)
	}
	if _, ok := table.Rows[1].Object.Object.(*tkestack.TApp); !ok {
		t.Errorf("row object = %T, want *TApp", table.Rows[1].Object.Object)
	}
	if table.ResourceVersion != "11" || table.Continue != "next" {
		t.Errorf("list meta = %+v, want resourceVersion 11 and continue next", table.ListMeta)
	}
}

func TestTableWrongType(t *testing.T) {
	if _, err := tableConvertor.ConvertToTable(context.Background(), &metav1.PartialObjectMetadata{}, nil); err == nil {
		t.Error("want an error for an object that is not a TApp")
	}
}
