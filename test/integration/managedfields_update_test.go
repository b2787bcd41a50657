package integration

import (
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestUpdateKeepsEveryManager checks the field ownership PUTs leave behind, the request's own managedFields
// or none: the server gives the field manager the replaced object without its managedFields while nothing
// else reads them (pkg/registry/replacedfields.go), and must still end where the field manager ends with
// them.
func TestUpdateKeepsEveryManager(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	created, err := tapps.Create(ctx, newTApp(ns, "owners", 2), metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	withStatus := created.DeepCopy()
	withStatus.Status.Replicas = 2
	withStatus.Status.AppStatus = "Running"
	cur, err := tapps.UpdateStatus(ctx, withStatus, metav1.UpdateOptions{FieldManager: "status-writer"})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	want := []string{"creator/Update/", "status-writer/Update/status"}
	if got := managers(cur); !slices.Equal(got, want) {
		t.Fatalf("managers after the status write = %v, want %v", got, want)
	}

	steps := []struct {
		name string
		// managedFields sets what the request carries.
		managedFields func(obj *tkestackv1.TApp)
		want          []string
		// ownsAnnotation is whether the editor's entry must own the annotation it set.
		ownsAnnotation bool
	}{
		{"the request carries the managedFields it read", func(*tkestackv1.TApp) {}, []string{"creator/Update/", "editor/Update/", "status-writer/Update/status"}, true},
		{"the request carries none", func(obj *tkestackv1.TApp) { obj.ManagedFields = nil }, []string{"creator/Update/", "editor/Update/", "status-writer/Update/status"}, true},
		{"the request's cannot be read", func(obj *tkestackv1.TApp) {
			obj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "broken", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "apps.tkestack.io/v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":`)}}}
		}, []string{"creator/Update/", "editor/Update/", "status-writer/Update/status"}, true},
		{"the request keeps only its own", func(obj *tkestackv1.TApp) {
			var own []metav1.ManagedFieldsEntry
			for _, e := range obj.ManagedFields {
				if e.Manager == "editor" {
					own = append(own, e)
				}
			}
			obj.ManagedFields = own
		}, []string{"editor/Update/"}, true},
		{"the request resets them", func(obj *tkestackv1.TApp) { obj.ManagedFields = []metav1.ManagedFieldsEntry{{}} }, nil, false},
	}
	for i, step := range steps {
		req := cur.DeepCopy()
		if req.Annotations == nil {
			req.Annotations = map[string]string{}
		}
		req.Annotations["step"] = step.name
		step.managedFields(req)
		updated, err := tapps.Update(ctx, req, metav1.UpdateOptions{FieldManager: "editor"})
		if err != nil {
			t.Fatalf("step %d (%s): update: %v", i, step.name, err)
		}
		for _, obj := range []*tkestackv1.TApp{updated, mustGetTApp(t, cs, ns, "owners")} {
			if got := managers(obj); !slices.Equal(got, step.want) {
				t.Errorf("step %d (%s): managers = %v, want %v", i, step.name, got, step.want)
			}
			if step.ownsAnnotation && !ownsField(obj, "editor", `"f:step"`) {
				t.Errorf("step %d (%s): the editor's entry does not own metadata.annotations.step: %v", i, step.name, obj.ManagedFields)
			}
		}
		cur = updated
	}
}

// managers lists the managedFields entries of obj as manager/operation/subresource, sorted.
func managers(obj *tkestackv1.TApp) []string {
	var out []string
	for _, e := range obj.ManagedFields {
		out = append(out, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
	}
	sort.Strings(out)
	return out
}

// ownsField reports whether manager's entry of obj names field (a fieldsV1 key such as `"f:step"`).
func ownsField(obj *tkestackv1.TApp, manager, field string) bool {
	for _, e := range obj.ManagedFields {
		if e.Manager == manager && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), field) {
			return true
		}
	}
	return false
}
