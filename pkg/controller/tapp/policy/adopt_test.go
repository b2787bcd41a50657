package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// originalPod returns the pod of id shaped as the original tkestack/tapp controller made it and as the
// garbage collector leaves it once its CRD TApp was deleted with orphan propagation: no owner reference,
// decimal fnv hash labels, no tapppod.TemplateKeysAnnotation, the readiness gate.
func originalPod(t *testing.T, tapp *tkestackv1.TApp, id string) *corev1.Pod {
	t.Helper()
	pod := mustPod(t, tapp, id)
	pod.OwnerReferences = nil
	pod.Labels[tkestack.TemplateHashLabel] = "8571628173525391740"
	pod.Labels[tkestack.UniqHashLabel] = "1740216837251739174"
	delete(pod.Annotations, tapppod.TemplateKeysAnnotation)
	pod.GenerateName = tapp.Name + "-"
	return pod
}

func TestAdoptionAndRelease(t *testing.T) {
	orphan := func(t *testing.T, tapp *tkestackv1.TApp, id string) *corev1.Pod {
		p := mustPod(t, tapp, id)
		p.OwnerReferences = nil
		return p
	}
	for _, tc := range []struct {
		name      string
		tapp      func(*tkestackv1.TApp)
		pods      func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod
		adopt     []Adoption
		release   []Release
		creates   []string
		conflicts []string
	}{
		{
			name: "orphans of wanted instances are adopted, not created",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				return []*corev1.Pod{orphan(t, tapp, "0"), orphan(t, tapp, "2")}
			},
			adopt:   []Adoption{{ID: "0", PodName: "app-0", UID: "uid-0"}, {ID: "2", PodName: "app-2", UID: "uid-2"}},
			creates: []string{"1"},
		},
		{
			name: "an orphan keeping a non-controller reference is adopted",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				p := orphan(t, tapp, "0")
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm"}}
				return []*corev1.Pod{p}
			},
			adopt:   []Adoption{{ID: "0", PodName: "app-0", UID: "uid-0"}},
			creates: []string{"1", "2"},
		},
		{
			name: "orphan above the replica count: neither adopted nor a conflict",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				return []*corev1.Pod{orphan(t, tapp, "5")}
			},
			creates: []string{"0", "1", "2"},
		},
		{
			name: "orphan of a killed instance is not adopted",
			tapp: func(tapp *tkestackv1.TApp) { tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"1": "Killed"} },
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				return []*corev1.Pod{orphan(t, tapp, "1")}
			},
			creates: []string{"0", "2"},
		},
		{
			name: "orphan whose selector labels do not match is a conflict",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				p := orphan(t, tapp, "1")
				p.Labels["app"] = "db"
				return []*corev1.Pod{p}
			},
			creates:   []string{"0", "2"},
			conflicts: []string{"1"},
		},
		{
			name: "orphan without the instance label is a conflict",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				p := orphan(t, tapp, "1")
				delete(p.Labels, tkestack.InstanceIDLabel)
				return []*corev1.Pod{p}
			},
			creates:   []string{"0", "2"},
			conflicts: []string{"1"},
		},
		{
			name: "terminating orphan is a conflict, not adopted",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				p := orphan(t, tapp, "1")
				terminate(p, testNow)
				return []*corev1.Pod{p}
			},
			creates:   []string{"0", "2"},
			conflicts: []string{"1"},
		},
		{
			name: "pod controlled by another object is a conflict, never adopted",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				p := mustPod(t, tapp, "1")
				p.OwnerReferences[0].UID = "old-crd-tapp"
				return []*corev1.Pod{p}
			},
			creates:   []string{"0", "2"},
			conflicts: []string{"1"},
		},
		{
			name: "nothing is adopted while the TApp is being deleted",
			tapp: func(tapp *tkestackv1.TApp) { tapp.DeletionTimestamp = &metav1.Time{Time: testNow} },
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				return []*corev1.Pod{orphan(t, tapp, "0")}
			},
		},
		{
			name: "our pod that the selector no longer matches is released, and its name waited for",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				p := mustPod(t, tapp, "1")
				p.Labels["app"] = "debug"
				return []*corev1.Pod{mustPod(t, tapp, "0"), p, mustPod(t, tapp, "2")}
			},
			release: []Release{{PodName: "app-1", UID: "uid-1"}},
		},
		{
			name: "a released pod holding the name is then a conflict",
			pods: func(t *testing.T, tapp *tkestackv1.TApp) []*corev1.Pod {
				p := orphan(t, tapp, "1")
				p.Labels["app"] = "debug"
				return []*corev1.Pod{mustPod(t, tapp, "0"), p, mustPod(t, tapp, "2")}
			},
			conflicts: []string{"1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(3)
			if tc.tapp != nil {
				tc.tapp(tapp)
			}
			plan := ComputePlan(tapp, tc.pods(t, tapp), nil, testNow)
			if !reflect.DeepEqual(plan.Adoptions, tc.adopt) {
				t.Errorf("adoptions = %+v, want %+v", plan.Adoptions, tc.adopt)
			}
			if !reflect.DeepEqual(plan.Releases, tc.release) {
				t.Errorf("releases = %+v, want %+v", plan.Releases, tc.release)
			}
			expectPlan(t, plan, tc.creates, nil, nil, nil, nil)
			var conflicts []string
			for _, c := range plan.Conflicts {
				conflicts = append(conflicts, c.ID)
			}
			if !reflect.DeepEqual(conflicts, tc.conflicts) {
				t.Errorf("conflicts = %+v, want %v", plan.Conflicts, tc.conflicts)
			}
		})
	}
}

// adopted returns pod with the TApp's controller reference, as the adoption patch leaves it.
func adopted(tapp *tkestackv1.TApp, pod *corev1.Pod) *corev1.Pod {
	pod.OwnerReferences = append(pod.OwnerReferences, OwnerReference(tapp))
	return pod
}

func TestForeignHashPodsAreJudgedByContent(t *testing.T) {
	for _, tc := range []struct {
		name       string
		edit       func(tapp *tkestackv1.TApp, pods []*corev1.Pod)
		relabels   []string
		inplace    []string
		recreates  []string
		held       []string
		wantImages map[string]string
	}{
		{
			name:     "pods running their template are relabelled, all at once, outside the budget",
			edit:     func(*tkestackv1.TApp, []*corev1.Pod) {},
			relabels: []string{"0", "1", "2"},
		},
		{
			name: "fields added by defaulting, admission and the scheduler do not count",
			edit: func(_ *tkestackv1.TApp, pods []*corev1.Pod) {
				for _, p := range pods {
					p.Spec = admitted(p.Spec)
				}
			},
			relabels: []string{"0", "1", "2"},
		},
		{
			name: "a template that was changed in the CRD and not rolled out yet: images only, in place within the budget",
			edit: func(tapp *tkestackv1.TApp, _ []*corev1.Pod) {
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			},
			inplace:    []string{"0"},
			held:       []string{"1", "2"},
			wantImages: map[string]string{"main": "nginx:2"},
		},
		{
			name: "other difference: recreated within the budget",
			edit: func(tapp *tkestackv1.TApp, _ []*corev1.Pod) {
				tapp.Spec.Template.Spec.Containers[0].Args = []string{"-v"}
			},
			recreates: []string{"0"},
			held:      []string{"1", "2"},
		},
		{
			name: "only one pod differs",
			edit: func(_ *tkestackv1.TApp, pods []*corev1.Pod) {
				pods[1].Spec.Containers[0].Image = "nginx:0"
			},
			relabels:   []string{"0", "2"},
			inplace:    []string{"1"},
			wantImages: map[string]string{"main": "nginx:1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(3)
			var pods []*corev1.Pod
			for _, id := range []string{"0", "1", "2"} {
				pods = append(pods, adopted(tapp, originalPod(t, tapp, id)))
			}
			tc.edit(tapp, pods)
			plan := ComputePlan(tapp, pods, nil, testNow)
			var relabels []string
			for _, u := range plan.Relabels {
				relabels = append(relabels, u.ID)
				if len(u.Images) != 0 {
					t.Errorf("relabel of %s changes images %v", u.PodName, u.Images)
				}
			}
			if !reflect.DeepEqual(relabels, tc.relabels) {
				t.Errorf("relabels = %v, want %v", relabels, tc.relabels)
			}
			expectPlan(t, plan, nil, nil, nil, tc.inplace, tc.recreates)
			if !reflect.DeepEqual(heldUpdates(tapp, pods, plan), tc.held) {
				t.Errorf("held = %v, want %v", heldUpdates(tapp, pods, plan), tc.held)
			}
			for _, u := range plan.InPlaceUpdates {
				if !reflect.DeepEqual(u.Images, tc.wantImages) {
					t.Errorf("in-place images of %s = %v, want %v", u.PodName, u.Images, tc.wantImages)
				}
			}
		})
	}
}

func TestRelabelledPodIsUpToDate(t *testing.T) {
	tapp := newTApp(1)
	tapp.Spec.Template.Annotations = map[string]string{"note": "x"}
	pod := adopted(tapp, originalPod(t, tapp, "0"))
	plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
	if len(plan.Relabels) != 1 {
		t.Fatalf("relabels = %+v", plan.Relabels)
	}
	u := plan.Relabels[0]
	if u.UID != pod.UID || u.Labels[tkestack.TemplateHashLabel] != tapppod.TemplateHash(&tapp.Spec.Template) || u.Labels[tkestack.UniqHashLabel] != tapppod.UniqHash(&tapp.Spec.Template) {
		t.Errorf("relabel = %+v", u)
	}
	if _, ok := u.Annotations[tapppod.TemplateKeysAnnotation]; !ok {
		t.Errorf("relabel does not record the template keys: %v", u.Annotations)
	}
	for k, v := range u.Labels {
		pod.Labels[k] = v
	}
	for k, v := range u.Annotations {
		pod.Annotations[k] = v
	}
	plan = ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
	if len(plan.Relabels)+len(plan.InPlaceUpdates)+len(plan.Recreates)+len(plan.Creates) != 0 {
		t.Errorf("after the relabel the plan still acts: %+v", plan)
	}
	if plan.Status.Instances["0"] != StatusRunning {
		t.Errorf("status = %v", plan.Status.Instances)
	}
}

func TestOurStaleHashesAreNotJudgedByContent(t *testing.T) {
	// A pod of ours with a hash of ours that is not the template's: the hashes decide, even if the spec
	// happens to equal the template (someone edited the template back and forth).
	tapp := newTApp(1)
	pod := mustPod(t, tapp, "0")
	pod.Labels[tkestack.TemplateHashLabel] = "0000000000"
	plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
	if len(plan.Relabels) != 0 || len(plan.InPlaceUpdates) != 1 {
		t.Errorf("relabels %+v in place %+v", plan.Relabels, plan.InPlaceUpdates)
	}
}

func TestPlanClaims(t *testing.T) {
	tapp := newTApp(2)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, {ObjectMeta: metav1.ObjectMeta{Name: "logs"}}}
	// original returns a claim as the original controller made it (template labels + selector labels, no
	// instance label), orphaned by a migration.
	original := func(name string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}}}
	}
	controlled := func(c *corev1.PersistentVolumeClaim, uid types.UID) *corev1.PersistentVolumeClaim {
		ref := OwnerReference(tapp)
		ref.UID = uid
		c.OwnerReferences = []metav1.OwnerReference{ref}
		return c
	}
	ours := NewPVCs(tapp, "0")[0] // created by this controller: never adopted
	ours.UID = "uid-ours"
	unmatched := original("logs-app-1")
	unmatched.Labels = map[string]string{"app": "db"}
	releasable := controlled(original("data-app-1"), tapp.UID)
	releasable.Labels = map[string]string{"app": "debug"}
	claims := []*corev1.PersistentVolumeClaim{
		original("logs-app-0"),   // adopted
		original("data-app-5"),   // not a wanted instance
		original("data-other-0"), // another TApp's name
		ours,                     // data-app-0, ours
		unmatched,                // selector does not match
		controlled(original("logs-app-9"), "other-uid"), // someone else's
		controlled(original("data-app-9"), tapp.UID),    // ours, still matching: kept
		releasable, // ours, no longer matching
	}
	got := PlanClaims(tapp, claims)
	wantAdopt := []ClaimAction{{ID: "0", Name: "logs-app-0", UID: "uid-logs-app-0"}}
	wantRelease := []ClaimAction{{Name: "data-app-1", UID: "uid-data-app-1"}}
	if !reflect.DeepEqual(got.Adoptions, wantAdopt) || !reflect.DeepEqual(got.Releases, wantRelease) {
		t.Errorf("PlanClaims = %+v, want adoptions %+v releases %+v", got, wantAdopt, wantRelease)
	}

	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Killed"}
	if got := PlanClaims(tapp, claims); len(got.Adoptions) != 0 {
		t.Errorf("claims of a killed instance adopted: %+v", got.Adoptions)
	}
	tapp.Spec.Statuses = nil
	tapp.DeletionTimestamp = &metav1.Time{Time: testNow}
	if got := PlanClaims(tapp, claims); len(got.Adoptions)+len(got.Releases) != 0 {
		t.Errorf("claims adopted or released while the TApp is being deleted: %+v", got)
	}
}
