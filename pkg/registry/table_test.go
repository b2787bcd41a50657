package registry

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
)

// testConvertor prints PartialObjectMetadata with one regular and one wide column; the cells are the
// object's label "a" and its UID.
var testConvertor = TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "A", Type: "string", Description: "label a"},
		{Name: "UID", Type: "string", Priority: 1, Description: "uid"},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return nil, ObjectTypeError("PartialObjectMetadata", obj)
		}
		return []interface{}{m.Labels["a"], string(m.UID)}, nil
	},
}

func partial(name, a string, created time.Time) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: "7",
		Labels: map[string]string{"a": a}, CreationTimestamp: metav1.NewTime(created),
	}}
}

func TestTableConvertorColumns(t *testing.T) {
	obj := partial("one", "x", time.Time{})
	for _, tc := range []struct {
		name        string
		options     runtime.Object
		wantHeaders bool
	}{
		{name: "nil options", options: nil, wantHeaders: true},
		{name: "headers", options: &metav1.TableOptions{}, wantHeaders: true},
		{name: "no headers", options: &metav1.TableOptions{NoHeaders: true}, wantHeaders: false},
		{name: "other options type", options: &metav1.GetOptions{}, wantHeaders: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, err := testConvertor.ConvertToTable(context.Background(), obj, tc.options)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.wantHeaders {
				if len(table.ColumnDefinitions) != 0 {
					t.Fatalf("NoHeaders: got column definitions %v", table.ColumnDefinitions)
				}
				if len(table.Rows) != 1 {
					t.Fatalf("NoHeaders must still print rows, got %d", len(table.Rows))
				}
				return
			}
			var names []string
			var priorities []int32
			for _, c := range table.ColumnDefinitions {
				names = append(names, c.Name)
				priorities = append(priorities, c.Priority)
			}
			if want := []string{"Name", "A", "Age", "UID"}; !reflect.DeepEqual(names, want) {
				t.Errorf("columns = %v, want %v", names, want)
			}
			if want := []int32{0, 0, 0, 1}; !reflect.DeepEqual(priorities, want) {
				t.Errorf("priorities = %v, want %v", priorities, want)
			}
			if f := table.ColumnDefinitions[0].Format; f != "name" {
				t.Errorf("Name column format = %q, want name", f)
			}
			if len(table.ColumnDefinitions) != len(table.Rows[0].Cells) {
				t.Errorf("%d columns but %d cells", len(table.ColumnDefinitions), len(table.Rows[0].Cells))
			}
		})
	}
	// The convertor's own column slice must not be modified by conversions.
	if len(testConvertor.Columns) != 2 {
		t.Errorf("Columns mutated: %v", testConvertor.Columns)
	}
}

func TestTableConvertorSingleObject(t *testing.T) {
	created := time.Now().Add(-3 * time.Hour)
	obj := partial("one", "x", created)
	table, err := testConvertor.ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(table.Rows))
	}
	row := table.Rows[0]
	want := []interface{}{"one", "x", duration.HumanDuration(time.Since(created)), "uid-one"}
	if !reflect.DeepEqual(row.Cells, want) {
		t.Errorf("cells = %#v, want %#v", row.Cells, want)
	}
	if row.Object.Object != obj {
		t.Errorf("row object = %#v, want the converted object itself", row.Object.Object)
	}
	if row.Object.Raw != nil {
		t.Errorf("row object has raw bytes %q; want the object kept unserialised", row.Object.Raw)
	}
	if table.ResourceVersion != "7" {
		t.Errorf("resourceVersion = %q, want 7", table.ResourceVersion)
	}
	if table.Continue != "" || table.RemainingItemCount != nil {
		t.Errorf("single object table has list metadata: %+v", table.ListMeta)
	}
}

func TestTableConvertorList(t *testing.T) {
	remaining := int64(4)
	now := time.Now()
	for _, tc := range []struct {
		name     string
		list     *metav1.PartialObjectMetadataList
		wantRows [][]interface{}
	}{
		{
			name: "two items",
			list: &metav1.PartialObjectMetadataList{
				ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "token", RemainingItemCount: &remaining},
				Items:    []metav1.PartialObjectMetadata{*partial("a", "1", now.Add(-2*time.Minute)), *partial("b", "2", time.Time{})},
			},
			wantRows: [][]interface{}{
				{"a", "1", "2m", "uid-a"},
				{"b", "2", "<unknown>", "uid-b"},
			},
		},
		{
			name: "empty",
			list: &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "43"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, err := testConvertor.ConvertToTable(context.Background(), tc.list, &metav1.TableOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(table.Rows) != len(tc.wantRows) {
				t.Fatalf("got %d rows, want %d", len(table.Rows), len(tc.wantRows))
			}
			for i, row := range table.Rows {
				if !reflect.DeepEqual(row.Cells, tc.wantRows[i]) {
					t.Errorf("row %d cells = %#v, want %#v", i, row.Cells, tc.wantRows[i])
				}
				m, ok := row.Object.Object.(*metav1.PartialObjectMetadata)
				if !ok || m.Name != tc.list.Items[i].Name {
					t.Errorf("row %d object = %#v, want item %q", i, row.Object.Object, tc.list.Items[i].Name)
				}
			}
			if table.ResourceVersion != tc.list.ResourceVersion {
				t.Errorf("resourceVersion = %q, want %q", table.ResourceVersion, tc.list.ResourceVersion)
			}
			if table.Continue != tc.list.Continue {
				t.Errorf("continue = %q, want %q", table.Continue, tc.list.Continue)
			}
			if !reflect.DeepEqual(table.RemainingItemCount, tc.list.RemainingItemCount) {
				t.Errorf("remainingItemCount = %v, want %v", table.RemainingItemCount, tc.list.RemainingItemCount)
			}
			if len(table.ColumnDefinitions) != 4 {
				t.Errorf("got %d column definitions, want 4", len(table.ColumnDefinitions))
			}
		})
	}
}

// otherObject has object metadata but is not the type the test convertor prints.
type otherObject struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (o *otherObject) DeepCopyObject() runtime.Object {
	out := *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func TestTableConvertorErrors(t *testing.T) {
	rowErr := errors.New("boom")
	failing := TableConvertor{Row: func(runtime.Object) ([]interface{}, error) { return nil, rowErr }}
	extraCell := TableConvertor{Columns: testConvertor.Columns, Row: func(runtime.Object) ([]interface{}, error) {
		return []interface{}{"x", "uid", "extra"}, nil
	}}
	for _, tc := range []struct {
		name      string
		convertor TableConvertor
		object    runtime.Object
		want      string
	}{
		{name: "wrong type", convertor: testConvertor, object: &otherObject{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
			want: "expected PartialObjectMetadata, got *registry.otherObject"},
		{name: "row error", convertor: failing, object: partial("a", "", time.Time{}), want: "boom"},
		{name: "row error in list", convertor: failing,
			object: &metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{*partial("a", "", time.Time{})}}, want: "boom"},
		{name: "wrong item type", convertor: testConvertor,
			object: &metav1.List{Items: []runtime.RawExtension{{Object: &metav1.Status{}}}}, want: ""},
		{name: "object without metadata", convertor: testConvertor, object: &runtime.Unknown{}, want: ""},
		{name: "cell count differs from columns", convertor: extraCell, object: partial("a", "", time.Time{}),
			want: "3 cells for 2 columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, err := tc.convertor.ConvertToTable(context.Background(), tc.object, nil)
			if err == nil {
				t.Fatalf("want an error, got table %+v", table)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestObjectTypeError(t *testing.T) {
	err := ObjectTypeError("TApp", &metav1.Status{})
	if want := "expected TApp, got *v1.Status"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestSelectorString(t *testing.T) {
	for _, tc := range []struct {
		name     string
		selector *metav1.LabelSelector
		want     string
	}{
		{name: "nil", selector: nil, want: "<none>"},
		{name: "empty", selector: &metav1.LabelSelector{}, want: "<all>"},
		{name: "empty maps", selector: &metav1.LabelSelector{MatchLabels: map[string]string{}}, want: "<all>"},
		{name: "labels", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"b": "2", "a": "1"}}, want: "a=1,b=2"},
		{name: "expressions", selector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"app": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"b", "a"}},
				{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		}, want: "app=web,!canary,tier in (a,b)"},
		{name: "invalid operator", selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}},
		}, want: "<invalid: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SelectorString(tc.selector)
			if strings.HasSuffix(tc.want, " ") {
				if !strings.HasPrefix(got, tc.want) {
					t.Errorf("SelectorString = %q, want prefix %q", got, tc.want)
				}
				return
			}
			if got != tc.want {
				t.Errorf("SelectorString = %q, want %q", got, tc.want)
			}
		})
	}
}
