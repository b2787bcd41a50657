package yurtappdaemon

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

func TestTableColumns(t *testing.T) {
	table, err := tableConvertor.ConvertToTable(context.Background(), deploymentYAD(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names, wide []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
		if c.Priority == 1 {
			wide = append(wide, c.Name)
		}
	}
	if want := []string{"Name", "WorkloadTemplate", "NodePools", "Age", "Selector", "NodePoolSelector"}; !reflect.DeepEqual(names, want) {
		t.Errorf("columns = %v, want %v", names, want)
	}
	if want := []string{"Selector", "NodePoolSelector"}; !reflect.DeepEqual(wide, want) {
		t.Errorf("wide columns = %v, want %v", wide, want)
	}
	table, err = tableConvertor.ConvertToTable(context.Background(), deploymentYAD(), &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 0 || len(table.Rows) != 1 {
		t.Errorf("NoHeaders: columns %v, %d rows", table.ColumnDefinitions, len(table.Rows))
	}
}

func TestTableRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		yad  func() *openyurt.YurtAppDaemon
		want []interface{}
	}{
		{name: "deployment", yad: deploymentYAD,
			want: []interface{}{"web", "Deployment", int64(2), "<unknown>", "app=web", openyurt.NodePoolTypeLabel + "=edge"}},
		{name: "statefulset", yad: statefulSetYAD,
			want: []interface{}{"web", "StatefulSet", int64(2), "<unknown>", "app=web", openyurt.NodePoolTypeLabel + "=edge"}},
		{name: "kind from the spec when status has none", yad: func() *openyurt.YurtAppDaemon {
			y := statefulSetYAD()
			y.Status = openyurt.YurtAppDaemonStatus{}
			y.Spec.NodePoolSelector = &metav1.LabelSelector{}
			return y
		}, want: []interface{}{"web", "StatefulSet", int64(0), "<unknown>", "app=web", "<all>"}},
		{name: "nothing", yad: func() *openyurt.YurtAppDaemon {
			return &openyurt.YurtAppDaemon{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
		}, want: []interface{}{"bare", "", int64(0), "<unknown>", "<none>", "<none>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yad := tc.yad()
			table, err := tableConvertor.ConvertToTable(context.Background(), yad, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(table.Rows) != 1 || !reflect.DeepEqual(table.Rows[0].Cells, tc.want) {
				t.Fatalf("rows = %#v, want one row %#v", table.Rows, tc.want)
			}
			if table.Rows[0].Object.Object != yad {
				t.Errorf("row object = %v, want the YurtAppDaemon", table.Rows[0].Object.Object)
			}
		})
	}
}

func TestTableList(t *testing.T) {
	list := &openyurt.YurtAppDaemonList{
		ListMeta: metav1.ListMeta{ResourceVersion: "12", Continue: "more"},
		Items:    []openyurt.YurtAppDaemon{*deploymentYAD(), *statefulSetYAD()},
	}
	table, err := tableConvertor.ConvertToTable(context.Background(), list, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 || table.Rows[0].Cells[1] != "Deployment" || table.Rows[1].Cells[1] != "StatefulSet" {
		t.Errorf("rows = %#v", table.Rows)
	}
	if table.ResourceVersion != "12" || table.Continue != "more" {
		t.Errorf("list meta = %+v", table.ListMeta)
	}
	if _, err := tableConvertor.ConvertToTable(context.Background(), &openyurt.NodePool{}, nil); err == nil {
		t.Error("want an error for a NodePool")
	}
}
