package yurtappset

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
)

// Two selected pools: two Deployments created with yurt-manager's generateName, the tweak on beijing's;
// while the caches have not shown them, a sync creates nothing more; then the status.
func TestCreatesOnePerPoolAndReportsStatus(t *testing.T) {
	h := newHarness(t, objs(testYAS(), testPool("beijing", "edge"), testPool("hangzhou", "edge"), testPool("shenzhen", "cloud")))
	h.must(h.sync())
	deps := h.deployments()
	if got := keys(deps); !reflect.DeepEqual(got, []string{"beijing", "hangzhou"}) {
		t.Fatalf("Deployments for pools %v", got)
	}
	if d := deps["beijing"]; !strings.HasPrefix(d.Name, "web-beijing-") || *d.Spec.Replicas != 3 || d.Labels[policy.RefYurtAppSetLabel] != "web" {
		t.Errorf("beijing: name %s replicas %d labels %v", d.Name, *d.Spec.Replicas, d.Labels)
	}
	if d := deps["hangzhou"]; *d.Spec.Replicas != 2 {
		t.Errorf("hangzhou replicas %d, want the template's 2", *d.Spec.Replicas)
	}
	requireEvent(t, h.events(), ReasonSuccessfulCreate)

	// The caches do not show the Deployments yet (only the revision): no second create.
	before := len(h.writes())
	h.must(h.sync())
	if w := h.writes()[before:]; len(w) != 0 {
		t.Errorf("sync before the caches caught up wrote %v", w)
	}
	h.converge()
	if n := len(h.deployments()); n != 2 {
		t.Errorf("%d Deployments after converging, want 2", n)
	}
	yas := h.yas()
	s := yas.Status
	if s.TotalWorkloads != 2 || s.ObservedGeneration != 1 || s.CurrentRevision != policy.RevisionName(yas) || s.CollisionCount == nil {
		t.Errorf("status %+v", s)
	}
	for typ, want := range map[v1beta1.YurtAppSetConditionType]string{
		policy.ConditionPoolFound: "True/FindPools", policy.ConditionAppDispatched: "True/AllWorkloadsCreated",
		policy.ConditionAppDeleted: "True/NoUnexpectedWorkload", policy.ConditionAppUpdated: "True/AllWorkloadsUpdated",
		policy.ConditionAppReady: "False/NotAllWorkloadsReady",
	} {
		if got := condition(yas, typ); got != want {
			t.Errorf("%s = %s, want %s", typ, got, want)
		}
	}
	revs, err := h.kube.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
	h.must(err)
	if len(revs.Items) != 1 || revs.Items[0].Name != s.CurrentRevision || revs.Items[0].Labels[policy.RefYurtAppSetLabel] != "web" {
		t.Errorf("ControllerRevisions %+v", revs.Items)
	}
}

// A pool that leaves the selection loses its Deployment (UID precondition); the other is untouched.
func TestPoolLeavingDeletesItsWorkload(t *testing.T) {
	h := newHarness(t, objs(testYAS(), testPool("beijing", "edge"), testPool("hangzhou", "edge")))
	h.converge()
	kept := h.deployments()["hangzhou"]
	gone := h.deployments()["beijing"]
	p, err := h.yurt.OpenYurtAppsV1alpha1().NodePools().Get(context.Background(), "beijing", metav1.GetOptions{})
	h.must(err)
	p.Labels["role"] = "cloud"
	_, err = h.yurt.OpenYurtAppsV1alpha1().NodePools().Update(context.Background(), p, metav1.UpdateOptions{})
	h.must(err)
	h.converge()
	deps := h.deployments()
	if got := keys(deps); !reflect.DeepEqual(got, []string{"hangzhou"}) || deps["hangzhou"].UID != kept.UID || deps["hangzhou"].ResourceVersion != kept.ResourceVersion {
		t.Errorf("Deployments %v after beijing left", got)
	}
	var deleted bool
	for _, a := range h.kube.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok && d.GetName() == gone.Name {
			deleted = d.GetDeleteOptions().Preconditions != nil && *d.GetDeleteOptions().Preconditions.UID == gone.UID
		}
	}
	if !deleted {
		t.Errorf("beijing's Deployment not deleted with a UID precondition")
	}
	requireEvent(t, h.events(), ReasonSuccessfulDelete)
	// A pool named in spec.pools that does not exist: PoolFound False.
	h.updateYAS(func(y *v1beta1.YurtAppSet) { y.Spec.Pools = []string{"nowhere"} })
	h.converge()
	if got := condition(h.yas(), policy.ConditionPoolFound); got != "False/PoolNotFound" {
		t.Errorf("PoolFound = %s, want False/PoolNotFound", got)
	}
}

// yurt-manager's Deployment (orphaned by a migration, labelled for the YurtAppSet, rendered at its own
// revision) is adopted, and its pod template is left as it is: no pod restarts.
func TestAdoptsYurtManagerWorkloadWithoutTouchingPods(t *testing.T) {
	yas := testYAS()
	pool := testPool("hangzhou", "edge")
	rendered, err := policy.RenderDeployment(yas, pool, "web-5d8f7c9b6")
	if err != nil {
		t.Fatal(err)
	}
	rendered.Name = "web-hangzhou-qx7zk"
	rendered.GenerateName = "web-hangzhou-"
	rendered.OwnerReferences = nil
	rendered.UID = "old-uid"
	// What the API server added to it.
	rendered.Spec.Template.Spec.RestartPolicy = "Always"
	rendered.Spec.Template.Spec.Containers[0].ImagePullPolicy = "IfNotPresent"
	rendered.Spec.Template.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	rendered.Spec.ProgressDeadlineSeconds = new(int32)
	*rendered.Spec.ProgressDeadlineSeconds = 600
	before := rendered.Spec.Template.DeepCopy()

	h := newHarness(t, objs(yas, pool), rendered)
	h.converge()
	d := h.deployments()["hangzhou"]
	if d.Name != "web-hangzhou-qx7zk" || d.UID != "old-uid" {
		t.Fatalf("workload replaced: %s %s", d.Name, d.UID)
	}
	if ref := metav1.GetControllerOf(d); ref == nil || ref.UID != "yas-uid" {
		t.Errorf("not adopted: %+v", d.OwnerReferences)
	}
	if !reflect.DeepEqual(&d.Spec.Template, before) {
		t.Errorf("pod template rewritten:\n got %+v\nwant %+v", d.Spec.Template, *before)
	}
	if d.Labels[policy.RevisionHashLabel] != h.yas().Status.CurrentRevision {
		t.Errorf("workload revision label %q, current %q", d.Labels[policy.RevisionHashLabel], h.yas().Status.CurrentRevision)
	}
	requireEvent(t, h.events(), ReasonAdopted)

	// A template change that reaches the pods rewrites them.
	h.updateYAS(func(y *v1beta1.YurtAppSet) {
		y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	})
	h.converge()
	if got := h.deployments()["hangzhou"].Spec.Template.Spec.Containers[0].Image; got != "nginx:1.26" {
		t.Errorf("image %s after the template change", got)
	}
}

// A failed create is reported in AppDispatched with yurt-manager's reason and retried.
func TestCreateFailureReported(t *testing.T) {
	h := newHarness(t, objs(testYAS(), testPool("beijing", "edge")))
	h.kube.PrependReactor("create", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("quota exceeded")
	})
	if err := h.sync(); err == nil {
		t.Errorf("sync with a failing create returned no error")
	}
	if got := condition(h.yas(), policy.ConditionAppDispatched); got != "False/CreateWorkloadError" {
		t.Errorf("AppDispatched = %s", got)
	}
	requireEvent(t, h.events(), ReasonFailedCreate)
}

// A NodePool list that fails deletes nothing.
func TestPoolListFailureDeletesNothing(t *testing.T) {
	h := newHarness(t, objs(testYAS(), testPool("beijing", "edge")))
	h.converge()
	h.ctrl.listPools = func() ([]*v1alpha1.NodePool, error) { return nil, errors.New("etcd is down") }
	before := len(h.writes())
	if err := h.sync(); err == nil {
		t.Errorf("no error")
	}
	for _, w := range h.writes()[before:] {
		if strings.HasPrefix(w, "delete") {
			t.Errorf("wrote %s", w)
		}
	}
	if got := condition(h.yas(), policy.ConditionPoolFound); got != "False/"+ReasonNodePoolListFailed {
		t.Errorf("PoolFound = %s", got)
	}
}

// Old revisions beyond revisionHistoryLimit (2) are deleted; the current one stays and is not counted.
func TestRevisionHistoryLimit(t *testing.T) {
	h := newHarness(t, objs(testYAS(), testPool("beijing", "edge")))
	h.converge()
	for _, image := range []string{"nginx:1.26", "nginx:1.27", "nginx:1.28"} {
		h.updateYAS(func(y *v1beta1.YurtAppSet) {
			y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = image
		})
		h.converge()
	}
	revs, err := h.kube.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
	h.must(err)
	current := h.yas().Status.CurrentRevision
	found := false
	for _, r := range revs.Items {
		found = found || r.Name == current
	}
	if len(revs.Items) != 3 || !found {
		t.Errorf("%d revisions (current %s found %t), want 3: 2 old and the current", len(revs.Items), current, found)
	}
	if d := h.deployments()["beijing"]; d.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || d.Labels[policy.RevisionHashLabel] != current {
		t.Errorf("workload at %s / %s", d.Spec.Template.Spec.Containers[0].Image, d.Labels[policy.RevisionHashLabel])
	}
}

// Events on NodePools enqueue only the YurtAppSets that select (or tweak) them.
func TestPoolEventsEnqueueRelatedSets(t *testing.T) {
	other := testYAS()
	other.Name, other.UID = "other", "other-uid"
	other.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "nothing"}}
	other.Spec.Workload.WorkloadTweaks = nil
	h := newHarness(t, objs(testYAS(), other))
	h.ctrl.enqueueForPool(testPool("beijing", "edge"))
	if n := h.ctrl.queue.Len(); n != 1 {
		t.Errorf("%d keys queued, want 1 (ns/web)", n)
	}
	key, _ := h.ctrl.queue.Get()
	if key != "ns/web" {
		t.Errorf("queued %s", key)
	}
}
