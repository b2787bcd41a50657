package yurtappdaemon

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/controllertest"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

// Checklist 1, 2, 14: one Deployment per selected pool, with the pool's placement, labels and owner; a
// ControllerRevision; the status; nothing written once converged.
func TestProvisionsOneDeploymentPerSelectedPool(t *testing.T) {
	yad := testYAD()
	h := newHarness(t, objs(yad, testPool("b", "edge"), testPool("a", "edge"), testPool("c", "cloud")))
	h.mustSync()

	deps := h.deployments()
	if got := keys(deps); !reflect.DeepEqual(got, []string{"web-a", "web-b"}) {
		t.Fatalf("deployments = %v, want [web-a web-b]", got)
	}
	revName := policy.RevisionName(yad)
	for _, pool := range []string{"a", "b"} {
		d := deps["web-"+pool]
		if d.Labels[policy.PoolNameLabel] != pool || d.Labels[policy.RevisionHashLabel] != revName || d.Labels["app"] != "web" {
			t.Errorf("%s labels = %v", d.Name, d.Labels)
		}
		if d.Annotations[policy.RefNodePoolAnnotation] != pool {
			t.Errorf("%s annotations = %v, want ref-nodepool %s", d.Name, d.Annotations, pool)
		}
		if want := map[string]string{"app": "web", policy.PoolNameLabel: pool}; !reflect.DeepEqual(d.Spec.Selector.MatchLabels, want) {
			t.Errorf("%s selector = %v, want %v", d.Name, d.Spec.Selector.MatchLabels, want)
		}
		if want := map[string]string{policy.NodePoolLabel: pool}; !reflect.DeepEqual(d.Spec.Template.Spec.NodeSelector, want) {
			t.Errorf("%s nodeSelector = %v, want %v", d.Name, d.Spec.Template.Spec.NodeSelector, want)
		}
		ref := metav1.GetControllerOf(d)
		if ref == nil || ref.UID != yad.UID || ref.Kind != "YurtAppDaemon" || ref.APIVersion != "apps.openyurt.io/v1alpha1" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("%s controller ref = %+v", d.Name, ref)
		}
		if ptr.Deref(d.Spec.Replicas, 0) != 2 {
			t.Errorf("%s replicas = %v, want 2", d.Name, d.Spec.Replicas)
		}
	}
	revs := h.revisions()
	if len(revs) != 1 {
		t.Fatalf("%d ControllerRevisions, want 1", len(revs))
	}
	rev := revs[0]
	data, _ := policy.TemplateJSON(yad)
	if rev.Name != revName || rev.Revision != 1 || !metav1.IsControlledBy(rev, yad) || !history.SameData(rev.Data.Raw, data) ||
		rev.Labels[YurtAppDaemonLabel] != "web" || rev.Labels[history.HashLabel] != policy.Revision(yad) {
		t.Errorf("revision = %s #%d labels %v owners %v", rev.Name, rev.Revision, rev.Labels, rev.OwnerReferences)
	}
	events := h.events()
	requireEvent(t, events, "Normal SuccessfulCreate Created Deployment web-a for pool a")
	requireEvent(t, events, "Normal SuccessfulCreate Created Deployment web-b for pool b")

	h.converge()
	got := h.yad().Status
	if got.TemplateType != policy.DeploymentKind || !reflect.DeepEqual(got.NodePools, []string{"a", "b"}) ||
		got.ObservedGeneration != 1 || ptr.Deref(got.CollisionCount, -1) != 0 || got.CurrentRevision != revName {
		t.Errorf("status = %+v", got)
	}
	cur := h.yad()
	if c := condition(cur, policy.ConditionProvisioned); c == nil || c.Status != corev1.ConditionTrue || c.Reason != policy.ReasonAllPoolsProvisioned {
		t.Errorf("WorkLoadProvisioned = %+v", c)
	}
	if c := condition(cur, policy.ConditionUpdated); c == nil || c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "workloads: 2") {
		t.Errorf("WorkLoadUpdated = %+v", c)
	}
	if c := condition(cur, policy.ConditionFailure); c != nil {
		t.Errorf("WorkLoadFailure = %+v, want none", c)
	}

	// Converged: another sync writes nothing, not even the status.
	n := h.mark()
	h.mustSync()
	if w := h.writesAfter(n); len(w) != 0 {
		t.Errorf("a converged sync wrote %v", w)
	}
}

// Checklist 18: StatefulSet templates are reconciled like Deployment templates.
func TestProvisionsStatefulSets(t *testing.T) {
	yad := withStatefulSet(testYAD())
	h := newHarness(t, objs(yad, testPool("a", "edge"), testPool("b", "edge")))
	h.converge()
	stss := h.statefulSets()
	if got := keys(stss); !reflect.DeepEqual(got, []string{"web-a", "web-b"}) {
		t.Fatalf("statefulsets = %v, want [web-a web-b]", got)
	}
	if len(h.deployments()) != 0 {
		t.Errorf("deployments created for a StatefulSet template")
	}
	s := stss["web-b"]
	if s.Spec.ServiceName != "web" || s.Spec.Template.Spec.NodeSelector[policy.NodePoolLabel] != "b" || !metav1.IsControlledBy(s, yad) {
		t.Errorf("web-b = serviceName %q nodeSelector %v owners %v", s.Spec.ServiceName, s.Spec.Template.Spec.NodeSelector, s.OwnerReferences)
	}
	if got := h.yad().Status; got.TemplateType != policy.StatefulSetKind || !reflect.DeepEqual(got.NodePools, []string{"a", "b"}) {
		t.Errorf("status = %+v", got)
	}

	// An image change updates both StatefulSets.
	h.updateYAD(func(y *v1alpha1.YurtAppDaemon) {
		y.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	})
	h.converge()
	for name, s := range h.statefulSets() {
		if s.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" || s.Labels[policy.RevisionHashLabel] != h.yad().Status.CurrentRevision {
			t.Errorf("%s: image %s revision %s, want nginx:1.26 at %s", name, s.Spec.Template.Spec.Containers[0].Image, s.Labels[policy.RevisionHashLabel], h.yad().Status.CurrentRevision)
		}
	}
}

// A stale cache never makes a second create: the expectations hold the sync until the cache shows the
// children, and a create that meets an existing object is not a failure.
func TestStaleCacheCausesNoDuplicateCreates(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge")))
	h.mustSync()
	h.mustSync() // the cache does not show web-a yet
	creates := 0
	for _, w := range h.writes() {
		if strings.HasPrefix(w, "create deployments") {
			creates++
		}
	}
	if creates != 1 {
		t.Fatalf("%d Deployment creates with a stale cache, want 1: %v", creates, h.writes())
	}

	// Once the expectations expire on the controller's clock, the sync acts on the stale cache again.
	h.clock.Step(expectations.TTL + time.Second)
	h.mustSync()
	creates = 0
	for _, w := range h.writes() {
		if strings.HasPrefix(w, "create deployments") {
			creates++
		}
	}
	if creates != 2 {
		t.Fatalf("%d Deployment creates once the controller's clock passed the expectations' TTL, want 2: %v", creates, h.writes())
	}

	// Without expectations (another controller instance, or a restart), the create meets AlreadyExists:
	// no failure, no event.
	h.ctrl.expectations.Forget("ns/web")
	h.events()
	if err := h.sync(); err != nil {
		t.Fatalf("a create meeting AlreadyExists failed the sync: %v", err)
	}
	for _, e := range h.events() {
		if strings.Contains(e, "Warning") {
			t.Errorf("warning event %q for a create meeting AlreadyExists", e)
		}
	}
	if c := condition(h.yad(), policy.ConditionFailure); c != nil {
		t.Errorf("WorkLoadFailure = %+v after AlreadyExists", c)
	}
	h.converge()
	if got := keys(h.deployments()); !reflect.DeepEqual(got, []string{"web-a"}) {
		t.Errorf("deployments = %v", got)
	}
}

// Checklist 3: a pool taint becomes a toleration; a taint added later updates that pool's child only.
func TestPoolTaintsBecomeTolerations(t *testing.T) {
	taint := corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}
	h := newHarness(t, objs(testYAD(), testPool("a", "edge", taint), testPool("b", "edge")))
	h.converge()
	want := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}
	deps := h.deployments()
	if got := deps["web-a"].Spec.Template.Spec.Tolerations; !reflect.DeepEqual(got, []corev1.Toleration{want}) {
		t.Errorf("web-a tolerations = %v, want %v", got, want)
	}
	if got := deps["web-b"].Spec.Template.Spec.Tolerations; len(got) != 0 {
		t.Errorf("web-b tolerations = %v, want none", got)
	}
	webA := deps["web-a"].ResourceVersion

	h.updatePool("b", func(p *v1alpha1.NodePool) {
		p.Spec.Taints = []corev1.Taint{{Key: "edge", Effect: corev1.TaintEffectNoExecute}}
	})
	n := h.mark()
	h.show()
	h.mustSync()
	if w := h.writesAfter(n); !reflect.DeepEqual(w, []string{"update deployments web-b"}) {
		t.Errorf("writes after a taint on pool b = %v, want only the update of web-b", w)
	}
	requireEvent(t, h.events(), "Updated Deployment web-b of pool b (PlacementChanged)")
	h.converge()
	deps = h.deployments()
	wantB := corev1.Toleration{Key: "edge", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	if got := deps["web-b"].Spec.Template.Spec.Tolerations; !reflect.DeepEqual(got, []corev1.Toleration{wantB}) {
		t.Errorf("web-b tolerations = %v, want %v", got, wantB)
	}
	if deps["web-a"].ResourceVersion != webA {
		t.Errorf("web-a was written for a taint of pool b")
	}
}

// Checklist 4: a pool that stops matching (or is deleted) loses its child; the others are untouched.
func TestPoolLeavingSelectionDeletesItsChild(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge"), testPool("b", "edge"), testPool("c", "edge")))
	h.converge()
	webA := h.deployments()["web-a"]

	h.updatePool("b", func(p *v1alpha1.NodePool) { p.Labels["role"] = "cloud" })
	h.must(h.yurt.OpenYurtAppsV1alpha1().NodePools().Delete(context.Background(), "c", metav1.DeleteOptions{}))
	h.show()
	n := len(h.kube.Actions())
	h.mustSync()
	var deletes []string
	for _, a := range h.kube.Actions()[n:] {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			deletes = append(deletes, d.Name)
			opts := d.DeleteOptions
			if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID == "" ||
				opts.PropagationPolicy == nil || *opts.PropagationPolicy != metav1.DeletePropagationBackground {
				t.Errorf("delete of %s without UID precondition or background propagation: %+v", d.Name, opts)
			}
		}
	}
	if !reflect.DeepEqual(deletes, []string{"web-b", "web-c"}) {
		t.Errorf("deleted %v, want [web-b web-c]", deletes)
	}
	requireEvent(t, h.events(), "Normal SuccessfulDelete Deleted Deployment web-b of pool b (PoolNotSelected)")
	h.converge()
	if got := keys(h.deployments()); !reflect.DeepEqual(got, []string{"web-a"}) {
		t.Errorf("deployments = %v, want [web-a]", got)
	}
	if h.deployments()["web-a"].ResourceVersion != webA.ResourceVersion {
		t.Errorf("web-a was written")
	}
	if got := h.yad().Status.NodePools; !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("status.nodepools = %v, want [a]", got)
	}
}

// Checklist 5, 6, 14: a template change is a new revision rolled to every child; changing it back reuses
// the old revision (bumped to the newest number); currentRevision always names the latest.
func TestTemplateChangeAndRollback(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge"), testPool("b", "edge")))
	h.converge()
	first := h.yad().Status.CurrentRevision

	h.updateYAD(func(y *v1alpha1.YurtAppDaemon) {
		y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	})
	h.converge()
	second := h.yad().Status.CurrentRevision
	if second == first {
		t.Fatalf("currentRevision did not change with the template")
	}
	revs := h.revisions()
	if len(revs) != 2 || revs[1].Name != second || revs[1].Revision != 2 {
		t.Fatalf("revisions after an image change: %v", revisionNames(revs))
	}
	for name, d := range h.deployments() {
		if d.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" || d.Labels[policy.RevisionHashLabel] != second ||
			d.Spec.Template.Labels[policy.RevisionHashLabel] != second {
			t.Errorf("%s: image %s, revision %s; want nginx:1.26 at %s", name, d.Spec.Template.Spec.Containers[0].Image, d.Labels[policy.RevisionHashLabel], second)
		}
	}
	if got := h.yad().Status.ObservedGeneration; got != 2 {
		t.Errorf("observedGeneration = %d, want 2", got)
	}

	// Rollback.
	n := h.mark()
	h.updateYAD(func(y *v1alpha1.YurtAppDaemon) {
		y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.25"
	})
	h.converge()
	for _, w := range h.writesAfter(n) {
		if strings.HasPrefix(w, "create controllerrevisions") {
			t.Errorf("rollback created a revision: %s", w)
		}
	}
	if got := h.yad().Status.CurrentRevision; got != first {
		t.Errorf("currentRevision after rollback = %s, want %s", got, first)
	}
	revs = h.revisions()
	if len(revs) != 2 || revs[1].Name != first || revs[1].Revision != 3 {
		t.Errorf("revisions after rollback = %v, want %s bumped to 3", revisionNames(revs), first)
	}
	for name, d := range h.deployments() {
		if d.Labels[policy.RevisionHashLabel] != first || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.25" {
			t.Errorf("%s after rollback: revision %s image %s", name, d.Labels[policy.RevisionHashLabel], d.Spec.Template.Spec.Containers[0].Image)
		}
	}
	requireEvent(t, h.events(), "RevisionReused")
}

func revisionNames(revs []*appsv1.ControllerRevision) []string {
	var out []string
	for _, r := range revs {
		out = append(out, r.Name+"#"+string(rune('0'+r.Revision)))
	}
	return out
}

// Checklist 7: revisionHistoryLimit bounds the old revisions kept.
func TestRevisionHistoryLimit(t *testing.T) {
	yad := testYAD()
	yad.Spec.RevisionHistoryLimit = ptr.To[int32](2)
	h := newHarness(t, objs(yad, testPool("a", "edge")))
	h.converge()
	for _, image := range []string{"nginx:1", "nginx:2", "nginx:3", "nginx:4"} {
		h.updateYAD(func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = image
		})
		h.converge()
		if n := len(h.revisions()); n > 3 {
			t.Errorf("after %s: %d revisions, want at most 3 (current + 2)", image, n)
		}
	}
	revs := h.revisions()
	current := h.yad().Status.CurrentRevision
	if len(revs) != 3 || revs[2].Name != current {
		t.Errorf("revisions = %v, want the 2 newest old ones and %s", revisionNames(revs), current)
	}
	if revs[0].Revision != 3 || revs[1].Revision != 4 || revs[2].Revision != 5 {
		t.Errorf("kept revisions %v, want numbers 3, 4, 5", revisionNames(revs))
	}
}

// Checklist 17: a change of replicas alone scales the children without a new revision or a pod template
// change (no pod restarts).
func TestReplicasOnlyChangeDoesNotRestartPods(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge")))
	h.converge()
	before := h.deployments()["web-a"]
	h.updateYAD(func(y *v1alpha1.YurtAppDaemon) {
		y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](5)
	})
	h.converge()
	after := h.deployments()["web-a"]
	if ptr.Deref(after.Spec.Replicas, 0) != 5 {
		t.Errorf("replicas = %v, want 5", after.Spec.Replicas)
	}
	if !reflect.DeepEqual(before.Spec.Template, after.Spec.Template) {
		t.Errorf("pod template changed with replicas:\nbefore %+v\nafter  %+v", before.Spec.Template, after.Spec.Template)
	}
	if n := len(h.revisions()); n != 1 {
		t.Errorf("%d revisions after a replicas change, want 1", n)
	}
	requireEvent(t, h.events(), "(ReplicasChanged)")
}

// Checklist 15: a failed NodePool list deletes nothing, and the status says why (written on the error
// path).
func TestPoolListErrorNeverDeletes(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge"), testPool("b", "edge")))
	h.converge()
	h.ctrl.listPools = func() ([]*v1alpha1.NodePool, error) { return nil, errors.New("boom") }
	n := h.mark()
	err := h.sync()
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("sync error = %v, want the list error (retried)", err)
	}
	for _, w := range h.writesAfter(n) {
		if !strings.HasPrefix(w, "update yurtappdaemons/status") {
			t.Errorf("unexpected write %q while the pools cannot be listed", w)
		}
	}
	if len(h.deployments()) != 2 {
		t.Errorf("deployments deleted after a list error")
	}
	c := condition(h.yad(), policy.ConditionFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonNodePoolListFailed || !strings.Contains(c.Message, "boom") {
		t.Errorf("WorkLoadFailure = %+v", c)
	}
	requireEvent(t, h.events(), "Warning NodePoolListFailed")

	// Recovery removes the condition.
	h.ctrl.listPools = func() ([]*v1alpha1.NodePool, error) { return h.ctrl.pools.List(everything()) }
	h.converge()
	if c := condition(h.yad(), policy.ConditionFailure); c != nil {
		t.Errorf("WorkLoadFailure kept after recovery: %+v", c)
	}
}

// Checklist 16: the template's nodeSelector, affinity and tolerations are kept and the pool's added;
// affinity without nodeAffinity does not crash.
func TestTemplatePlacementIsMerged(t *testing.T) {
	yad := testYAD()
	spec := &yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec
	spec.NodeSelector = map[string]string{"disk": "ssd"}
	spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}},
	}}
	spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
	h := newHarness(t, objs(yad, testPool("a", "edge", corev1.Taint{Key: "edge", Effect: corev1.TaintEffectNoSchedule})))
	h.converge()
	pod := h.deployments()["web-a"].Spec.Template.Spec
	if want := map[string]string{"disk": "ssd", policy.NodePoolLabel: "a"}; !reflect.DeepEqual(pod.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", pod.NodeSelector, want)
	}
	if !reflect.DeepEqual(pod.Affinity, spec.Affinity) {
		t.Errorf("affinity = %+v, want the template's", pod.Affinity)
	}
	want := []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}, {Key: "edge", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	if !reflect.DeepEqual(pod.Tolerations, want) {
		t.Errorf("tolerations = %v, want %v", pod.Tolerations, want)
	}
}

// Checklist 12: an empty nodepoolSelector selects every pool.
func TestEmptyNodePoolSelectorSelectsAll(t *testing.T) {
	yad := testYAD()
	yad.Spec.NodePoolSelector = &metav1.LabelSelector{}
	h := newHarness(t, objs(yad, testPool("a", "edge"), testPool("b", "cloud")))
	h.converge()
	if got := keys(h.deployments()); !reflect.DeepEqual(got, []string{"web-a", "web-b"}) {
		t.Errorf("deployments = %v, want one per pool", got)
	}
}

// Checklist 13: a child deleted by hand is noticed through the Deployment informer and recreated.
func TestChildDeletedByHandIsRecreated(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge")))
	h.converge()
	gone := h.deployments()["web-a"]
	h.must(h.kube.AppsV1().Deployments("ns").Delete(context.Background(), "web-a", metav1.DeleteOptions{}))
	h.show()
	h.ctrl.childDeleted(cache.DeletedFinalStateUnknown{Key: "ns/web-a", Obj: gone})
	if h.ctrl.queue.Len() != 1 {
		t.Fatalf("deleting a child enqueued %d keys, want its owner", h.ctrl.queue.Len())
	}
	if key, _ := h.ctrl.queue.Get(); key != "ns/web" {
		t.Fatalf("enqueued %q, want ns/web", key)
	}
	h.converge()
	if _, ok := h.deployments()["web-a"]; !ok {
		t.Errorf("web-a not recreated")
	}
}

// Checklist 20: foreign workloads are never adopted, updated or deleted; one holding a child's name is a
// reported conflict.
// An orphan workload of a selected pool whose pods the selector matches is adopted under its name (as
// yurt-app-manager's workloads are after a migration); a workload that holds a child's name and is not
// selected is a conflict and never written.
func TestOrphansAreAdoptedAndSquattersLeftAlone(t *testing.T) {
	foreign := func(name string, labels map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("foreign-uid-" + name), Labels: labels, ResourceVersion: "3"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}},
		}
	}
	orphan := foreign("web-a-x7k2p", map[string]string{"app": "web", policy.PoolNameLabel: "a"})
	squatter := foreign("web-b", map[string]string{"app": "other"})
	h := newHarness(t, objs(testYAD(), testPool("a", "edge"), testPool("b", "edge")), orphan, squatter)
	h.converge()
	var adoption []clienttesting.PatchAction
	for _, a := range h.kube.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && a.GetResource().Resource == "deployments" {
			adoption = append(adoption, p)
		}
	}
	if len(adoption) != 1 || adoption[0].GetName() != "web-a-x7k2p" || adoption[0].GetPatchType() != types.StrategicMergePatchType ||
		!strings.Contains(string(adoption[0].GetPatch()), `"uid":"foreign-uid-web-a-x7k2p"`) {
		t.Fatalf("adoption patches %v, want one of web-a-x7k2p bound to its UID", adoption)
	}
	for _, w := range h.writes() {
		if strings.HasSuffix(w, " web-b") && !strings.HasPrefix(w, "create") || strings.HasSuffix(w, " web-a") {
			t.Errorf("unexpected write: %s", w)
		}
	}
	deps := h.deployments()
	if a := deps["web-a-x7k2p"]; a == nil || !metav1.IsControlledBy(a, h.yad()) || a.UID != orphan.UID {
		t.Errorf("the orphan of pool a was not adopted under its name: %+v", a)
	}
	if _, created := deps["web-a"]; created {
		t.Errorf("web-a created next to the adopted workload")
	}
	if deps["web-b"].Labels["app"] != "other" || deps["web-b"].OwnerReferences != nil {
		t.Errorf("squatter changed: %+v", deps["web-b"].ObjectMeta)
	}
	events := h.events()
	requireEvent(t, events, "Normal Adopted Adopted Deployment web-a-x7k2p (uid foreign-uid-web-a-x7k2p) as the workload of pool a")
	yad := h.yad()
	if c := condition(yad, policy.ConditionProvisioned); c == nil || c.Status != corev1.ConditionFalse || c.Reason != policy.ReasonWorkloadConflict {
		t.Errorf("WorkLoadProvisioned = %+v, want False/WorkloadConflict", c)
	}
	if c := condition(yad, policy.ConditionFailure); c == nil || c.Reason != policy.ReasonWorkloadConflict || !strings.Contains(c.Message, "web-b") {
		t.Errorf("WorkLoadFailure = %+v", c)
	}
	requireEvent(t, events, "Warning WorkloadConflict Deployment web-b for pool b")

	// The squatter goes away: the YurtAppDaemon reporting the conflict is enqueued and creates its child.
	h.must(h.kube.AppsV1().Deployments("ns").Delete(context.Background(), "web-b", metav1.DeleteOptions{}))
	h.show()
	h.ctrl.childDeleted(squatter)
	if key, _ := h.ctrl.queue.Get(); key != "ns/web" {
		t.Fatalf("enqueued %q after the squatter left, want ns/web", key)
	}
	h.converge()
	if d := h.deployments()["web-b"]; d == nil || !metav1.IsControlledBy(d, h.yad()) {
		t.Errorf("web-b not created once the name was free")
	}
	if c := condition(h.yad(), policy.ConditionFailure); c != nil {
		t.Errorf("WorkLoadFailure kept: %+v", c)
	}
}

// Checklist 21: two children for one pool: the extra one is deleted.
func TestDuplicateChildIsDeleted(t *testing.T) {
	yad := testYAD()
	pool := testPool("a", "edge")
	render := func(name string, minute int) *appsv1.Deployment {
		d, err := policy.RenderDeployment(yad, pool, policy.RevisionName(yad))
		if err != nil {
			t.Fatal(err)
		}
		d.Name = name
		d.UID = "uid-" + "dup-" + "x"
		if name == "web-a" {
			d.UID = "uid-web-a"
		}
		d.ResourceVersion = "5"
		d.CreationTimestamp = metav1.NewTime(time.Date(2023, 1, 1, 0, minute, 0, 0, time.UTC))
		return d
	}
	h := newHarness(t, objs(yad, pool), render("web-a", 1), render("web-a-copy", 2))
	h.mustSync()
	var deletes []string
	for _, w := range h.writes() {
		if strings.HasPrefix(w, "delete ") {
			deletes = append(deletes, w)
		}
	}
	if !reflect.DeepEqual(deletes, []string{"delete deployments web-a-copy"}) {
		t.Errorf("deletes = %v, want the newer duplicate deleted", deletes)
	}
	h.converge()
	if got := keys(h.deployments()); !reflect.DeepEqual(got, []string{"web-a"}) {
		t.Errorf("deployments = %v", got)
	}
}

// Checklist 19: long YurtAppDaemon and pool names give valid child names and label values.
func TestLongNames(t *testing.T) {
	yad := testYAD()
	yad.Name = strings.Repeat("y", 52)
	long := strings.Repeat("p", 63)
	h := newHarness(t, objs(yad, testPool(long, "edge")))
	h.must(h.ctrl.sync(context.Background(), "ns/"+yad.Name))
	deps := h.deployments()
	if len(deps) != 1 {
		t.Fatalf("deployments = %v", keys(deps))
	}
	for name, d := range deps {
		if len(name) > policy.MaxChildNameLength || len(validation.IsDNS1123Label(name)) > 0 {
			t.Errorf("child name %q (%d characters) is not a short DNS label", name, len(name))
		}
		for k, v := range d.Labels {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("label %s=%q: %v", k, v, errs)
			}
		}
		if d.Labels[policy.PoolNameLabel] != long {
			t.Errorf("pool label = %q", d.Labels[policy.PoolNameLabel])
		}
	}
	for _, r := range h.revisions() {
		if errs := validation.IsValidLabelValue(r.Name); len(errs) > 0 {
			t.Errorf("revision name %q is not a label value", r.Name)
		}
	}
}

// A failed child update is reported (event, WorkLoadFailure) and retried.
func TestUpdateFailureIsReported(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge")))
	h.converge()
	h.kube.PrependReactor("update", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(appsv1.Resource("deployments"), "web-a", errors.New("quota"))
	})
	h.updateYAD(func(y *v1alpha1.YurtAppDaemon) {
		y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	})
	h.show()
	if err := h.sync(); err == nil {
		t.Fatal("a failed update must fail the sync (retry)")
	}
	requireEvent(t, h.events(), "Warning FailedUpdate update Deployment web-a of pool a (RevisionChanged)")
	yad := h.yad()
	if c := condition(yad, policy.ConditionFailure); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonFailedUpdate {
		t.Errorf("WorkLoadFailure = %+v", c)
	}
	if c := condition(yad, policy.ConditionUpdated); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("WorkLoadUpdated = %+v, want False", c)
	}
	if yad.Status.ObservedGeneration != 2 || yad.Status.CurrentRevision != policy.RevisionName(yad) {
		t.Errorf("status = %+v, want observedGeneration 2 and the new revision", yad.Status)
	}
}

// A ControllerRevision name taken by other data raises collisionCount and moves to a new name.
func TestRevisionCollision(t *testing.T) {
	yad := testYAD()
	squatter := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: policy.RevisionName(yad), Namespace: "ns", UID: "other"},
		Data:       runtime.RawExtension{Raw: []byte(`{"other":true}`)},
		Revision:   1,
	}
	h := newHarness(t, objs(yad, testPool("a", "edge")), squatter)
	h.converge()
	got := h.yad()
	if ptr.Deref(got.Status.CollisionCount, 0) != 1 {
		t.Fatalf("collisionCount = %v, want 1", got.Status.CollisionCount)
	}
	if got.Status.CurrentRevision == squatter.Name || got.Status.CurrentRevision != policy.RevisionName(got) {
		t.Errorf("currentRevision = %s (squatter %s)", got.Status.CurrentRevision, squatter.Name)
	}
	if d := h.deployments()["web-a"]; d.Labels[policy.RevisionHashLabel] != got.Status.CurrentRevision {
		t.Errorf("web-a revision = %s, want %s", d.Labels[policy.RevisionHashLabel], got.Status.CurrentRevision)
	}
	if len(h.revisions()) != 2 {
		t.Errorf("revisions = %v, want the squatter and ours", revisionNames(h.revisions()))
	}
}

// Checklist 11 (controller side): a YurtAppDaemon being deleted is left to the garbage collector.
func TestDeletingYurtAppDaemonIsLeftToGC(t *testing.T) {
	yad := testYAD()
	now := metav1.Now()
	yad.DeletionTimestamp = &now
	yad.Finalizers = []string{"example.com/hold"}
	h := newHarness(t, objs(yad, testPool("a", "edge")))
	h.mustSync()
	if w := h.writes(); len(w) != 0 {
		t.Errorf("writes for a terminating YurtAppDaemon: %v", w)
	}
}

// NodePool events enqueue only the YurtAppDaemons whose selector matches the old or new labels; status
// writes enqueue nothing.
func TestPoolEventsEnqueueMatchingYurtAppDaemons(t *testing.T) {
	edge, cloud, none := testYAD(), testYAD(), testYAD()
	edge.Name, edge.UID = "edge", "u1"
	cloud.Name, cloud.UID = "cloud", "u2"
	cloud.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "cloud"}}
	none.Name, none.UID = "none", "u3"
	none.Spec.NodePoolSelector = nil
	h := newHarness(t, objs(edge, cloud, none))
	drain := func() []string { return controllertest.Drain(h.ctrl.queue) }

	p := testPool("a", "edge")
	h.ctrl.enqueueForPool(p.Labels)
	if got := drain(); !reflect.DeepEqual(got, []string{"ns/edge"}) {
		t.Errorf("pool added: %v, want [ns/edge]", got)
	}
	status := p.DeepCopy()
	status.ResourceVersion = "2"
	status.Status.ReadyNodeNum = 3
	h.ctrl.poolUpdated(p, status)
	if got := drain(); len(got) != 0 {
		t.Errorf("pool status write: %v, want nothing", got)
	}
	moved := status.DeepCopy()
	moved.ResourceVersion = "3"
	moved.Labels["role"] = "cloud"
	h.ctrl.poolUpdated(status, moved)
	if got := drain(); len(got) != 2 {
		t.Errorf("pool relabelled: %v, want ns/edge and ns/cloud", got)
	}
	tainted := moved.DeepCopy()
	tainted.ResourceVersion = "4"
	tainted.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	h.ctrl.poolUpdated(moved, tainted)
	if got := drain(); !reflect.DeepEqual(got, []string{"ns/cloud"}) {
		t.Errorf("pool tainted: %v, want [ns/cloud]", got)
	}
	h.ctrl.poolDeleted(cache.DeletedFinalStateUnknown{Key: "a", Obj: tainted})
	if got := drain(); !reflect.DeepEqual(got, []string{"ns/cloud"}) {
		t.Errorf("pool deleted: %v, want [ns/cloud]", got)
	}

	// A status-only update of a YurtAppDaemon is not synced; a spec change is.
	statusOnly := edge.DeepCopy()
	statusOnly.ResourceVersion = "9"
	statusOnly.Status.CurrentRevision = "x"
	h.ctrl.yadUpdated(edge, statusOnly)
	if got := drain(); len(got) != 0 {
		t.Errorf("YurtAppDaemon status write: %v, want nothing", got)
	}
	specChange := statusOnly.DeepCopy()
	specChange.ResourceVersion = "10"
	specChange.Generation++
	specChange.Spec.RevisionHistoryLimit = ptr.To[int32](3)
	h.ctrl.yadUpdated(statusOnly, specChange)
	if got := drain(); !reflect.DeepEqual(got, []string{"ns/edge"}) {
		t.Errorf("YurtAppDaemon spec change: %v, want [ns/edge]", got)
	}
}

// Children map to their owner through the controller reference (UID checked); other workloads do not.
func TestChildEventsMapToOwner(t *testing.T) {
	yad := testYAD()
	h := newHarness(t, objs(yad))
	child := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "ns", ResourceVersion: "1",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(yad, policy.ControllerKind)}}}
	if key, ok := h.ctrl.ownerKey(child); !ok || key != "ns/web" {
		t.Errorf("ownerKey = %q %v, want ns/web", key, ok)
	}
	stale := child.DeepCopy()
	stale.OwnerReferences[0].UID = "old-uid"
	if _, ok := h.ctrl.ownerKey(stale); ok {
		t.Errorf("a child of a former YurtAppDaemon of the same name maps to the new one")
	}
	other := child.DeepCopy()
	other.OwnerReferences[0].Kind = "ReplicaSet"
	other.OwnerReferences[0].APIVersion = "apps/v1"
	if _, ok := h.ctrl.ownerKey(other); ok {
		t.Errorf("a workload controlled by something else maps to a YurtAppDaemon")
	}
	updated := child.DeepCopy()
	updated.ResourceVersion = "2"
	h.ctrl.childUpdated(child, updated)
	if key, _ := h.ctrl.queue.Get(); key != "ns/web" {
		t.Errorf("child update enqueued %q, want ns/web", key)
	}
}

// Run waits for the caches, syncs with workers and returns once the context ends.
func TestRunStopsWithContext(t *testing.T) {
	yad := testYAD()
	h := newHarness(t, objs(yad, testPool("a", "edge")))
	// Running, the controller retries with backoff: it runs on the real clock, as outside tests.
	ctrl := h.newController(clock.RealClock{})
	controllertest.RunUntil(t, func(ctx context.Context) { ctrl.Run(ctx, 2) }, func() (bool, string) {
		_, created := h.deployments()["web-a"]
		c := condition(h.yad(), policy.ConditionProvisioned)
		return created && c != nil && c.Status == corev1.ConditionTrue, fmt.Sprintf("web-a not provisioned; status %+v", h.yad().Status)
	}, h.kubeInf, h.yurtInf)
}
