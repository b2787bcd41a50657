package kubectltapp

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// testRevision is a ControllerRevision of TApp web (owner uid) numbered n, holding tapp's templates.
func testRevision(name string, n int64, uid types.UID, tapp *tkestackv1.TApp) appsv1.ControllerRevision {
	data, err := policy.RevisionData(tapp)
	if err != nil {
		panic(err)
	}
	return appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			OwnerReferences: []metav1.OwnerReference{tapppod.OwnerReference("web", uid)}},
		Revision: n,
		Data:     runtime.RawExtension{Raw: data},
	}
}

func withImage(image string) func(*tkestackv1.TApp) {
	return func(tapp *tkestackv1.TApp) { tapp.Spec.Template.Spec.Containers[0].Image = image }
}

func TestOwnedRevisionsAndHistoryRows(t *testing.T) {
	tapp := testTApp(2, func(tapp *tkestackv1.TApp) {
		tapp.Status.CurrentRevision, tapp.Status.UpdateRevision = "web-b", "web-c"
	})
	revs := []appsv1.ControllerRevision{
		testRevision("web-c", 3, testUID, tapp),
		testRevision("other-a", 1, "other-uid", tapp),
		testRevision("web-a", 1, testUID, tapp),
		testRevision("web-b", 2, testUID, tapp),
	}
	revs[2].Annotations = map[string]string{ChangeCauseAnnotation: "kubectl set image"}
	rows := HistoryRows(tapp, OwnedRevisions(tapp, revs))
	want := []HistoryRow{
		{Revision: 1, Name: "web-a", ChangeCause: "kubectl set image"},
		{Revision: 2, Name: "web-b", ChangeCause: none, Role: "current"},
		{Revision: 3, Name: "web-c", ChangeCause: none, Role: "update"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("HistoryRows =\n%+v\nwant\n%+v", rows, want)
	}
	tapp.Status.CurrentRevision = "web-c"
	if got := HistoryRows(tapp, OwnedRevisions(tapp, revs))[2].Role; got != "current,update" {
		t.Errorf("role of a revision both current and update = %q", got)
	}
}

func TestRollbackTarget(t *testing.T) {
	tapp := testTApp(2)
	revs := func(names ...string) []*appsv1.ControllerRevision {
		var out []appsv1.ControllerRevision
		for i, name := range names {
			out = append(out, testRevision(name, int64(i+1), testUID, tapp))
		}
		return OwnedRevisions(tapp, out)
	}
	tests := []struct {
		name           string
		updateRevision string
		revisions      []*appsv1.ControllerRevision
		to             int64
		want, wantErr  string
	}{
		{name: "previous of the newest", revisions: revs("web-a", "web-b", "web-c"), want: "web-b"},
		{name: "previous of the update revision", updateRevision: "web-b", revisions: revs("web-a", "web-b", "web-c"), want: "web-a"},
		{name: "a given revision", revisions: revs("web-a", "web-b", "web-c"), to: 1, want: "web-a"},
		{name: "an unknown revision", revisions: revs("web-a"), to: 5, wantErr: "unable to find revision 5"},
		{name: "a single revision has no previous", revisions: revs("web-a"), wantErr: "no revision"},
		{name: "no history", wantErr: "no rollout history"},
		{name: "negative", revisions: revs("web-a"), to: -1, wantErr: "must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tapp.Status.UpdateRevision = tt.updateRevision
			got, err := RollbackTarget(tapp, tt.revisions, tt.to)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Name != tt.want {
				t.Fatalf("RollbackTarget = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestUndoPatch(t *testing.T) {
	tests := []struct {
		name      string
		current   *tkestackv1.TApp
		revision  *tkestackv1.TApp
		wantEqual bool
	}{
		{name: "an image change", current: testTApp(2, withImage("nginx:9")), revision: testTApp(2)},
		{name: "an annotation added since the revision goes", current: testTApp(2, func(tapp *tkestackv1.TApp) {
			tapp.Spec.Template.Annotations = map[string]string{RestartedAtAnnotation: "now"}
		}), revision: testTApp(2)},
		{name: "a pool entry added since goes, one removed comes back", current: testTApp(2, func(tapp *tkestackv1.TApp) {
			tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"blue": tapp.Spec.Template}
		}), revision: testTApp(2)},
		{name: "a pool removed when the revision had none", current: testTApp(2),
			revision: testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.TemplatePool = nil })},
		{name: "the same templates", current: testTApp(2), revision: testTApp(2), wantEqual: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := testRevision("web-a", 1, testUID, tt.revision)
			templates, err := DecodeRevision(&rev)
			if err != nil {
				t.Fatal(err)
			}
			if got := SameTemplates(tt.current, templates); got != tt.wantEqual {
				t.Fatalf("SameTemplates = %v, want %v", got, tt.wantEqual)
			}
			patch, err := UndoPatch(tt.current, templates)
			if err != nil {
				t.Fatal(err)
			}
			got := applyJSONPatch(t, tt.current, patch)
			want := tt.current.DeepCopy()
			want.Spec.Template, want.Spec.TemplatePool = tt.revision.Spec.Template, tt.revision.Spec.TemplatePool
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after %s:\n got %+v\nwant %+v", patch, got.Spec, want.Spec)
			}
			if !SameTemplates(got, templates) {
				t.Errorf("after the patch the templates still differ from the revision")
			}
		})
	}
}

func TestDecodeRevisionRefusesBadData(t *testing.T) {
	for _, raw := range []string{`{"spec":`, `[]`} {
		rev := appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Data: runtime.RawExtension{Raw: []byte(raw)}}
		if _, err := DecodeRevision(&rev); err == nil {
			t.Errorf("DecodeRevision(%s) = nil error", raw)
		}
	}
}
