package nodepool

import (
	"context"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

func TestTable(t *testing.T) {
	table, err := tableConvertor.ConvertToTable(context.Background(), validPool(), &metav1.TableOptions{})
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
	if want := []string{"Name", "Type", "ReadyNodes", "NotReadyNodes", "LeaderNodes", "LeaderElectionAge", "Age", "Selector"}; !reflect.DeepEqual(names, want) {
		t.Errorf("columns = %v, want %v", names, want)
	}
	if want := []string{"Selector"}; !reflect.DeepEqual(wide, want) {
		t.Errorf("wide columns = %v, want %v", wide, want)
	}
	want := []interface{}{"hangzhou", "Edge", int64(2), int64(1), "", "", "<unknown>", openyurt.NodePoolLabel + "=hangzhou"}
	if len(table.Rows) != 1 || !reflect.DeepEqual(table.Rows[0].Cells, want) {
		t.Errorf("rows = %#v, want one row %#v", table.Rows, want)
	}
	if table.Rows[0].Object.Object.(*openyurt.NodePool).Name != "hangzhou" {
		t.Errorf("row object = %v", table.Rows[0].Object.Object)
	}
	if table.ResourceVersion != "3" {
		t.Errorf("resourceVersion = %q, want 3", table.ResourceVersion)
	}

	empty := &openyurt.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	list := &openyurt.NodePoolList{ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: "c"}, Items: []openyurt.NodePool{*validPool(), *empty}}
	table, err = tableConvertor.ConvertToTable(context.Background(), list, &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 0 {
		t.Errorf("NoHeaders: columns = %v", table.ColumnDefinitions)
	}
	if len(table.Rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(table.Rows))
	}
	if want := []interface{}{"bare", "", int64(0), int64(0), "", "", "<unknown>", "<none>"}; !reflect.DeepEqual(table.Rows[1].Cells, want) {
		t.Errorf("bare pool cells = %#v, want %#v", table.Rows[1].Cells, want)
	}
	if table.ResourceVersion != "9" || table.Continue != "c" {
		t.Errorf("list meta = %+v", table.ListMeta)
	}

	elected := validPool()
	elected.Spec.EnableLeaderElection = true
	elected.Status.LeaderNum = 1
	elected.Status.LeaderLastElectedTime = &metav1.Time{Time: time.Now().Add(-90 * time.Minute)}
	table, err = tableConvertor.ConvertToTable(context.Background(), elected, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cells := table.Rows[0].Cells; cells[4] != "1" || cells[5] != "90m" {
		t.Errorf("leader cells = %#v, want 1 and 90m", cells[4:6])
	}
	if _, err := tableConvertor.ConvertToTable(context.Background(), &openyurt.YurtAppDaemon{}, nil); err == nil {
		t.Error("want an error for a YurtAppDaemon")
	}
}
