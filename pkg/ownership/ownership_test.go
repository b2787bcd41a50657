package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const ownerUID = types.UID("owner-uid")

func pod(name string, lbls map[string]string, refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), Labels: lbls, OwnerReferences: refs}}
}

func ref(uid types.UID, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "x", UID: uid, Controller: &controller}
}

func TestDecide(t *testing.T) {
	match := map[string]string{"app": "web"}
	other := map[string]string{"app": "db"}
	belongs := func(o metav1.Object) bool { return strings.HasPrefix(o.GetName(), "web-") }
	sel := labels.SelectorFromSet(match)
	owner := Owner{Namespace: "ns", UID: ownerUID, Selector: sel, Belongs: belongs}
	deleting := owner
	deleting.Deleting = true
	noSelector := owner
	noSelector.Selector = nil
	nothing := owner
	nothing.Selector = labels.Nothing()
	anyName := owner
	anyName.Belongs = nil
	terminating := pod("web-0", match)
	terminating.DeletionTimestamp = &metav1.Time{}
	otherNS := pod("web-0", match)
	otherNS.Namespace = "elsewhere"

	for _, tc := range []struct {
		name  string
		owner Owner
		obj   *corev1.Pod
		want  Decision
	}{
		{"orphan, matches, belongs", owner, pod("web-0", match), Adopt},
		{"orphan with a non-controller reference to us", owner, pod("web-0", match, ref(ownerUID, false)), Adopt},
		{"orphan, matches, other name", owner, pod("api-0", match), Ignore},
		{"orphan, any name allowed", anyName, pod("api-0", match), Adopt},
		{"orphan, belongs, selector does not match", owner, pod("web-0", other), Conflict},
		{"orphan, owner being deleted", deleting, pod("web-0", match), Conflict},
		{"orphan being deleted", owner, terminating, Conflict},
		{"orphan, nil selector", noSelector, pod("web-0", match), Conflict},
		{"orphan, selector selecting nothing", nothing, pod("web-0", match), Conflict},
		{"orphan of another namespace", owner, otherNS, Ignore},
		{"ours, matches", owner, pod("web-0", match, ref(ownerUID, true)), Keep},
		{"ours, name not ours", owner, pod("api-0", match, ref(ownerUID, true)), Keep},
		{"ours, selector no longer matches", owner, pod("web-0", other, ref(ownerUID, true)), Release},
		{"ours, no longer matches, owner being deleted", deleting, pod("web-0", other, ref(ownerUID, true)), Keep},
		{"ours, nil selector never releases", noSelector, pod("web-0", other, ref(ownerUID, true)), Keep},
		{"someone else's, belongs", owner, pod("web-0", match, ref("other", true)), Conflict},
		{"someone else's, other name", owner, pod("api-0", match, ref("other", true)), Ignore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.owner, tc.obj); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func applyPatch(t *testing.T, p *corev1.Pod, patch []byte) *corev1.Pod {
	t.Helper()
	orig, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := strategicpatch.StrategicMergePatch(orig, patch, corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var res corev1.Pod
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

func TestAdoptPatchAddsOnlyTheControllerReferenceAndIsBoundToTheUID(t *testing.T) {
	gc := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "cm-uid"}
	p := pod("web-0", nil, gc)
	owner := ControllerRef("apps.tkestack.io/v1", "TApp", "web", ownerUID)
	patch, err := AdoptPatch(owner, p.UID)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(patch, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["metadata"]["uid"] != string(p.UID) {
		t.Errorf("patch %s does not carry metadata.uid %s", patch, p.UID)
	}
	out := applyPatch(t, p, patch)
	uids := map[types.UID]bool{}
	for _, r := range out.OwnerReferences {
		uids[r.UID] = true
	}
	if len(out.OwnerReferences) != 2 || !uids["cm-uid"] || !uids[ownerUID] {
		t.Fatalf("ownerReferences after adoption = %+v, want the ConfigMap's kept and ours added", out.OwnerReferences)
	}
	got := metav1.GetControllerOf(out)
	if got == nil || got.UID != ownerUID || got.BlockOwnerDeletion == nil || !*got.BlockOwnerDeletion {
		t.Errorf("controller after adoption = %+v", got)
	}
	if _, err := AdoptPatch(owner, ""); err == nil {
		t.Error("AdoptPatch without the object's UID must fail")
	}
}

func TestReleasePatchRemovesOnlyOurReference(t *testing.T) {
	gc := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "cm-uid"}
	p := pod("web-0", nil, gc, ref(ownerUID, true))
	patch, err := ReleasePatch(ownerUID, p.UID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patch), `"uid":"web-0-uid"`) {
		t.Errorf("patch %s does not carry the pod's UID", patch)
	}
	out := applyPatch(t, p, patch)
	if len(out.OwnerReferences) != 1 || out.OwnerReferences[0].UID != "cm-uid" {
		t.Errorf("ownerReferences after release = %+v, want only the ConfigMap's", out.OwnerReferences)
	}
	if _, err := ReleasePatch("", p.UID); err == nil {
		t.Error("ReleasePatch without the owner's UID must fail")
	}
}

func TestGone(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	uidRefused := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web-0", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "x", "field is immutable")})
	otherInvalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web-0", field.ErrorList{field.Invalid(field.NewPath("metadata", "ownerReferences"), "x", "only one controller")})
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewNotFound(gr, "web-0"), true},
		{uidRefused, true},
		{otherInvalid, false},
		{apierrors.NewConflict(gr, "web-0", errors.New("x")), false},
		{errors.New("boom"), false},
	} {
		if got := Gone(tc.err); got != tc.want {
			t.Errorf("Gone(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRecheckReadsOnceAndRefusesADeletingOwner(t *testing.T) {
	now := metav1.Now()
	gr := schema.GroupResource{Resource: "tapps"}
	for _, tc := range []struct {
		name    string
		obj     *metav1.ObjectMeta
		err     error
		refused bool
		fails   bool
	}{
		{name: "live owner", obj: &metav1.ObjectMeta{UID: ownerUID}},
		{name: "being deleted", obj: &metav1.ObjectMeta{UID: ownerUID, DeletionTimestamp: &now}, refused: true, fails: true},
		{name: "replaced", obj: &metav1.ObjectMeta{UID: "new"}, refused: true, fails: true},
		{name: "gone", err: apierrors.NewNotFound(gr, "x"), refused: true, fails: true},
		{name: "read error", err: errors.New("timeout"), fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := 0
			check := Recheck(ownerUID, func(context.Context) (metav1.Object, error) {
				reads++
				if tc.err != nil {
					return nil, tc.err
				}
				return tc.obj, nil
			})
			for i := 0; i < 3; i++ {
				err := check(context.Background())
				if (err != nil) != tc.fails || errors.Is(err, ErrOwnerDeleting) != tc.refused {
					t.Fatalf("call %d: err = %v, want failure %v, ErrOwnerDeleting %v", i, err, tc.fails, tc.refused)
				}
			}
			if reads != 1 {
				t.Errorf("owner read %d times, want once", reads)
			}
		})
	}
}

func TestControllerOf(t *testing.T) {
	tapps := schema.GroupKind{Group: "apps.tkestack.io", Kind: "TApp"}
	ref := func(apiVersion, kind string, controller bool) metav1.OwnerReference {
		r := ControllerRef(apiVersion, kind, "web", ownerUID)
		r.Controller = &controller
		return r
	}
	for _, tc := range []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{name: "no reference"},
		{name: "the served version", refs: []metav1.OwnerReference{ref("apps.tkestack.io/v1", "TApp", true)}, want: true},
		{name: "another version of the group", refs: []metav1.OwnerReference{ref("apps.tkestack.io/v2", "TApp", true)}, want: true},
		{name: "another group", refs: []metav1.OwnerReference{ref("apps.example.com/v1", "TApp", true)}},
		{name: "the core group", refs: []metav1.OwnerReference{ref("v1", "TApp", true)}},
		{name: "another kind", refs: []metav1.OwnerReference{ref("apps.tkestack.io/v1", "TAppSet", true)}},
		{name: "not the controller", refs: []metav1.OwnerReference{ref("apps.tkestack.io/v1", "TApp", false)}},
		{name: "an unparsable apiVersion", refs: []metav1.OwnerReference{ref("a/b/c", "TApp", true)}},
		{name: "the controller among others", refs: []metav1.OwnerReference{ref("v1", "ConfigMap", false), ref("apps.tkestack.io/v1", "TApp", true)}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ControllerOf(pod("p", nil, tc.refs...), tapps)
			if (got != nil) != tc.want {
				t.Fatalf("ControllerOf = %v, want a reference: %v", got, tc.want)
			}
			if got != nil && (got.Kind != "TApp" || got.UID != ownerUID) {
				t.Errorf("ControllerOf = %+v, want the TApp's", got)
			}
		})
	}
}

func TestOwnerOf(t *testing.T) {
	now := metav1.Now()
	owner := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: ownerUID}}
	deleting := owner.DeepCopy()
	deleting.DeletionTimestamp = &now
	for _, tc := range []struct {
		name     string
		owner    metav1.Object
		selector *metav1.LabelSelector
		selects  bool // the selector matches app=web
		deleting bool
	}{
		{name: "selector", owner: owner, selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, selects: true},
		{name: "no selector", owner: owner},
		{name: "unparsable selector", owner: owner, selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bad"}}}},
		{name: "deleting", owner: deleting, selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, selects: true, deleting: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := OwnerOf(tc.owner, tc.selector, nil)
			if o.Namespace != "ns" || o.UID != ownerUID || o.Deleting != tc.deleting {
				t.Errorf("OwnerOf = %+v", o)
			}
			if got := o.Selector != nil && o.Selector.Matches(labels.Set{"app": "web"}); got != tc.selects {
				t.Errorf("selector %v selects app=web: %v, want %v", o.Selector, got, tc.selects)
			}
		})
	}
}
