package registry

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"
)

// TableConvertor prints objects as kubectl table rows. Row returns one cell per entry of Columns, in that
// order. Columns with Priority 1 are shown only with -o wide; as for built-in workloads they come after
// AGE: NAME, the normal columns, AGE, the wide columns.
type TableConvertor struct {
	Columns []metav1.TableColumnDefinition
	Row     func(obj runtime.Object) ([]interface{}, error)
}

var _ rest.TableConvertor = TableConvertor{}

// ConvertToTable implements rest.TableConvertor for a single object or a list.
func (c TableConvertor) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	addRow := func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		cells, err := c.Row(obj)
		if err != nil {
			return err
		}
		row := metav1.TableRow{Object: runtime.RawExtension{Object: obj}}
		row.Cells = append(row.Cells, m.GetName())
		if len(cells) != len(c.Columns) {
			return fmt.Errorf("%d cells for %d columns", len(cells), len(c.Columns))
		}
		var wide []interface{}
		for i, cell := range cells {
			if c.Columns[i].Priority > 0 {
				wide = append(wide, cell)
			} else {
				row.Cells = append(row.Cells, cell)
			}
		}
		row.Cells = append(row.Cells, age(m.GetCreationTimestamp()))
		row.Cells = append(row.Cells, wide...)
		table.Rows = append(table.Rows, row)
		return nil
	}
	if meta.IsListType(object) {
		if err := meta.EachListItem(object, addRow); err != nil {
			return nil, err
		}
		if list, err := meta.ListAccessor(object); err == nil {
			table.ResourceVersion = list.GetResourceVersion()
			table.Continue = list.GetContinue()
			table.RemainingItemCount = list.GetRemainingItemCount()
		}
	} else {
		if err := addRow(object); err != nil {
			return nil, err
		}
		if m, err := meta.CommonAccessor(object); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
	}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: "Name", Type: "string", Format: "name", Description: "Name of the object, unique in its namespace.",
		})
		var wide []metav1.TableColumnDefinition
		for _, column := range c.Columns {
			if column.Priority > 0 {
				wide = append(wide, column)
			} else {
				table.ColumnDefinitions = append(table.ColumnDefinitions, column)
			}
		}
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: "Age", Type: "string", Description: "Time since the object was created.",
		})
		table.ColumnDefinitions = append(table.ColumnDefinitions, wide...)
	}
	return table, nil
}

// SinceString renders the time since t for a table cell, like the Age column; "" when t is nil.
func SinceString(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return age(*t)
}

func age(created metav1.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(created.Time))
}

// ObjectTypeError reports an object of an unexpected type handed to a table row function.
func ObjectTypeError(want string, got runtime.Object) error {
	return fmt.Errorf("expected %s, got %T", want, got)
}

// SelectorString renders a label selector for a table cell: "<none>" when absent, "<all>" when empty.
func SelectorString(s *metav1.LabelSelector) string {
	if s == nil {
		return "<none>"
	}
	selector, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return fmt.Sprintf("<invalid: %v>", err)
	}
	if selector.Empty() {
		return "<all>"
	}
	return selector.String()
}
