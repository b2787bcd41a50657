package tapp

import (
	"context"
	"errors"
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	tappfake "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// harness is a controller over fake clientsets whose informer caches are filled by hand, so that each test
// decides exactly what the (possibly stale) cache shows.
type harness struct {
	t        testing.TB
	ctrl     *Controller
	kube     *kubefake.Clientset
	tapps    *tappfake.Clientset
	kubeInf  informers.SharedInformerFactory
	tappInf  externalversions.SharedInformerFactory
	recorder *record.FakeRecorder
	// clock is the controller's clock; it moves only when a test steps it.
	clock *clocktesting.FakeClock
	// resourceVersion numbers the versions showPods gives changed pods in the cache.
	resourceVersion int
}

func newHarness(t testing.TB, tapp *tkestackv1.TApp) *harness {
	tkestackv1.SetObjectDefaults_TApp(tapp) // as the API server serves every TApp
	h := &harness{t: t, kube: kubefake.NewClientset(), tapps: tappfake.NewClientset(tapp), recorder: record.NewFakeRecorder(100),
		clock: clocktesting.NewFakeClock(time.Now())}
	// The API server gives every new pod a UID; the fake does not.
	h.kube.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if pod, ok := a.(clienttesting.CreateAction).GetObject().(*corev1.Pod); ok && pod.UID == "" {
			pod.UID = types.UID(uuid.NewUUID())
		}
		return false, nil, nil
	})
	h.kubeInf = informers.NewSharedInformerFactory(h.kube, 0)
	h.tappInf = externalversions.NewSharedInformerFactory(h.tapps, 0)
	ctrl, err := NewController(h.kube, h.kube, h.tapps, h.kubeInf.Core().V1().Pods(), h.kubeInf.Core().V1().PersistentVolumeClaims(), h.kubeInf.Storage().V1().StorageClasses(), h.kubeInf.Core().V1().Nodes(),
		h.tappInf.TKEStackApps().V1().TApps(), h.kubeInf.Apps().V1().ControllerRevisions(), h.recorder, h.clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctrl.queue.ShutDown)
	h.ctrl = ctrl
	h.setTApp(tapp)
	return h
}

func (h *harness) setTApp(tapp *tkestackv1.TApp) {
	tkestackv1.SetObjectDefaults_TApp(tapp)
	if err := h.tappInf.TKEStackApps().V1().TApps().Informer().GetIndexer().Update(tapp); err != nil {
		h.t.Fatal(err)
	}
}

// updateImage puts a copy of tapp with its template's first image set to image (generation 2) into the cache
// and syncs it: the start of an in-place image update. It returns the copy.
func (h *harness) updateImage(tapp *tkestackv1.TApp, image string) *tkestackv1.TApp {
	updated := tapp.DeepCopy()
	updated.Spec.Template.Spec.Containers[0].Image = image
	updated.Generation = 2
	h.setTApp(updated)
	if err := h.sync(); err != nil {
		h.t.Fatal(err)
	}
	return updated
}

// restartOnImage writes, as the kubelet would, the status of pod's first container restarted on image.
func (h *harness) restartOnImage(pod *corev1.Pod, image string) {
	pod = pod.DeepCopy()
	pod.Status.ContainerStatuses[0].Image = image
	pod.Status.ContainerStatuses[0].ImageID = image + "@sha256:2"
	pod.Status.ContainerStatuses[0].RestartCount = 1
	if _, err := h.kube.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// imageUpdateStarted is a harness with one running instance of a TApp whose image update to nginx:2 the
// last sync started in place, the cache not showing it yet.
func imageUpdateStarted(t *testing.T) *harness {
	tapp := testTApp(1)
	h := newHarness(t, tapp)
	_ = h.sync()
	h.markRunning()
	h.showPods()
	h.updateImage(tapp, "nginx:2")
	return h
}

// showPods puts the pods the fake API holds into the informer cache (the cache catching up), calling the
// pod event handlers as an informer would: podAdded for new pods, podUpdated for changed ones (the fake API
// does not move resourceVersions, so a changed pod gets a fresh one in the cache), podDeleted for pods gone
// or replaced by another of the same name.
func (h *harness) showPods() []*corev1.Pod {
	list, err := h.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	indexer := h.kubeInf.Core().V1().Pods().Informer().GetIndexer()
	listed := map[string]bool{}
	var pods []*corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		key := pod.Namespace + "/" + pod.Name
		listed[key] = true
		obj, exists, err := indexer.GetByKey(key)
		if err != nil {
			h.t.Fatal(err)
		}
		switch old, _ := obj.(*corev1.Pod); {
		case exists && old.UID == pod.UID:
			if old.ResourceVersion == pod.ResourceVersion && !apiequality.Semantic.DeepEqual(old, pod) {
				h.resourceVersion++
				pod.ResourceVersion = fmt.Sprintf("cache-%d", h.resourceVersion)
			}
			if err := indexer.Update(pod); err != nil {
				h.t.Fatal(err)
			}
			h.ctrl.podUpdated(old, pod)
		default:
			if exists {
				if err := indexer.Delete(old); err != nil {
					h.t.Fatal(err)
				}
				h.ctrl.podDeleted(old)
			}
			if err := indexer.Add(pod); err != nil {
				h.t.Fatal(err)
			}
			h.ctrl.podAdded(pod)
		}
		pods = append(pods, pod)
	}
	for _, obj := range indexer.List() {
		if pod := obj.(*corev1.Pod); !listed[pod.Namespace+"/"+pod.Name] {
			if err := indexer.Delete(pod); err != nil {
				h.t.Fatal(err)
			}
			h.ctrl.podDeleted(pod)
		}
	}
	return pods
}

func (h *harness) sync() error {
	return h.ctrl.sync(context.Background(), "ns/web")
}

func (h *harness) actions(verb, resource string) []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range h.kube.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			out = append(out, a)
		}
	}
	return out
}

func (h *harness) storedTApp() *tkestackv1.TApp {
	tapp, err := h.tapps.TKEStackAppsV1().TApps("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return tapp
}

func testTApp(replicas int32) *tkestackv1.TApp {
	one := intstr.FromInt32(1)
	all := intstr.FromString("100%")
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}},
	}
	return &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "tapp-uid", Generation: 1, ResourceVersion: "1"},
		Spec: tkestackv1.TAppSpec{
			Replicas:            replicas,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:            template,
			DefaultTemplateName: "default",
			UpdateStrategy: tkestackv1.TAppUpdateStrategy{Template: "default", MaxUnavailable: &one,
				ForceUpdate: tkestackv1.ForceUpdateStrategy{MaxUnavailable: &all}},
		},
		// The API server renders spec.selector here at every write (registry/tkestack/tapp); the controller
		// carries it over.
		Status: tkestackv1.TAppStatus{ScaleLabelSelector: "app=web"},
	}
}

// markRunning makes the API's copy of every pod Running and Ready with the readiness gate True, as the
// kubelet and the controller would have.
func (h *harness) markRunning() {
	list, _ := h.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	for i := range list.Items {
		pod := list.Items[i].DeepCopy()
		pod.ResourceVersion = "5"
		pod.Status.Phase = corev1.PodRunning
		pod.Status.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: c.Image + "@sha256:1", ContainerID: "cid-" + pod.Name, Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
		}
		pod.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: inplace.ReadinessGate, Status: corev1.ConditionTrue},
		}
		if _, err := h.kube.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			h.t.Fatal(err)
		}
	}
}

func TestSyncCreatesInstancesWithClaimsOnce(t *testing.T) {
	tapp := testTApp(3)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	h := newHarness(t, tapp)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("create", "pods")); got != 3 {
		t.Fatalf("created %d pods, want 3", got)
	}
	if got := len(h.actions("create", "persistentvolumeclaims")); got != 3 {
		t.Fatalf("created %d claims, want 3", got)
	}
	for _, name := range []string{"web-0", "web-1", "web-2"} {
		pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !policy.IsControlledBy(pod, tapp) || !inplace.HasReadinessGate(pod) {
			t.Errorf("pod %s: not controlled by the TApp or without readiness gate", name)
		}
	}
	// The cache has not shown the pods yet: a second sync must not create them again.
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("create", "pods")); got != 3 {
		t.Fatalf("stale cache caused duplicate creates: %d pod creates", got)
	}
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("create", "pods")); got != 3 {
		t.Fatalf("%d pod creates after the cache caught up, want 3", got)
	}
	status := h.storedTApp().Status
	if status.Replicas != 3 || status.ObservedGeneration != 1 || status.ScaleLabelSelector != "app=web" {
		t.Errorf("status = %+v", status)
	}
}

func TestSyncReportsCreateFailureWithAPIMessage(t *testing.T) {
	h := newHarness(t, testTApp(4))
	h.kube.PrependReactor("create", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), "web-0",
			field.ErrorList{field.Invalid(field.NewPath("spec", "containers").Index(0).Child("image"), "", "must not be empty")})
	})
	if err := h.sync(); err == nil {
		t.Fatal("a failed create must make the sync fail (retry with backoff)")
	}
	if got := len(h.actions("create", "pods")); got != 1 {
		t.Errorf("slow start: %d create attempts after the first failure, want 1", got)
	}
	cond := meta.FindStatusCondition(h.storedTApp().Status.Conditions, tkestackv1.TAppReplicaFailure)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "FailedCreate" || !strings.Contains(cond.Message, "must not be empty") {
		t.Fatalf("ReplicaFailure condition = %+v", cond)
	}
	if !hasEvent(h.recorder, "FailedCreate") {
		t.Error("no FailedCreate event")
	}
}

func TestSyncKillDeletesWithUIDPrecondition(t *testing.T) {
	tapp := testTApp(2)
	h := newHarness(t, tapp)
	_ = h.sync()
	h.markRunning()
	pods := h.showPods()
	killed := tapp.DeepCopy()
	killed.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"1": policy.StatusKilled}
	killed.Generation = 2
	h.setTApp(killed)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	deletes := h.actions("delete", "pods")
	if len(deletes) != 1 {
		t.Fatalf("%d deletes, want 1", len(deletes))
	}
	d := deletes[0].(clienttesting.DeleteActionImpl)
	var uid1 string
	for _, p := range pods {
		if p.Name == "web-1" {
			uid1 = string(p.UID)
		}
	}
	if d.Name != "web-1" || d.DeleteOptions.Preconditions == nil || d.DeleteOptions.Preconditions.UID == nil || string(*d.DeleteOptions.Preconditions.UID) != uid1 {
		t.Fatalf("delete = %s %+v, want web-1 with UID precondition %q", d.Name, d.DeleteOptions.Preconditions, uid1)
	}
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.storedTApp().Status.Statuses["1"]; got != policy.StatusKilled {
		t.Errorf("status of killed instance = %q", got)
	}
	if got := len(h.actions("create", "pods")); got != 2 {
		t.Errorf("a killed instance must stay down: %d creates", got)
	}
}

func TestSyncUpdatesImageInPlace(t *testing.T) {
	tapp := testTApp(1)
	h := newHarness(t, tapp)
	_ = h.sync()
	h.markRunning()
	before := h.showPods()[0]
	updated := h.updateImage(tapp, "nginx:2")
	if got := len(h.actions("delete", "pods")); got != 0 {
		t.Fatalf("image change recreated the pod (%d deletes)", got)
	}
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.UID != before.UID || pod.Spec.Containers[0].Image != "nginx:2" || !inplace.InProgress(pod) {
		t.Fatalf("pod after sync: uid %s image %s in progress %v", pod.UID, pod.Spec.Containers[0].Image, inplace.InProgress(pod))
	}
	if inplace.GateStatus(pod) != corev1.ConditionFalse {
		t.Errorf("readiness gate = %s, want False during the update", inplace.GateStatus(pod))
	}
	want, _ := policy.NewPod(updated, "0")
	if pod.Labels[tkestack.TemplateHashLabel] != want.Labels[tkestack.TemplateHashLabel] {
		t.Errorf("template hash label not moved to the new template")
	}

	// The kubelet restarts the container with the new image; the controller completes the update.
	h.restartOnImage(pod, "nginx:2")
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	pod, _ = h.kube.CoreV1().Pods("ns").Get(context.Background(), "web-0", metav1.GetOptions{})
	if inplace.InProgress(pod) || inplace.GateStatus(pod) != corev1.ConditionTrue {
		t.Fatalf("update not completed: in progress %v, gate %s", inplace.InProgress(pod), inplace.GateStatus(pod))
	}
	if !hasEvent(h.recorder, "InPlaceUpdated") {
		t.Error("no InPlaceUpdated event")
	}
}

// TestCompletionIsWrittenOnce: a sync that runs before the cache shows the completion of an in-place update
// (gate True, state annotation removed) does not complete it a second time from the older copy.
func TestCompletionIsWrittenOnce(t *testing.T) {
	h := imageUpdateStarted(t)
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.restartOnImage(pod, "nginx:2")
	h.showPods()
	before := h.gateWrites()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.gateWrites() - before; got != 1 {
		t.Fatalf("%d status patches to complete the update, want 1", got)
	}
	// The cache still shows the pod before the completion.
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.gateWrites() - before; got != 1 {
		t.Errorf("%d status patches after a sync on the stale cache, want still 1", got)
	}
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.gateWrites() - before; got != 1 {
		t.Errorf("%d status patches once the cache shows the completion, want still 1", got)
	}
	pod, _ = h.kube.CoreV1().Pods("ns").Get(context.Background(), "web-0", metav1.GetOptions{})
	if inplace.InProgress(pod) || inplace.GateStatus(pod) != corev1.ConditionTrue {
		t.Errorf("update not completed: in progress %v, gate %s", inplace.InProgress(pod), inplace.GateStatus(pod))
	}
}

// catchingUpIndex is the controller's pod index whose cache catches up (catchUp) right after the controller
// listed a TApp's pods: the list is older than the cache the rest of the sync sees.
type catchingUpIndex struct {
	cache.Indexer
	catchUp func()
}

func (i catchingUpIndex) ByIndex(name, value string) ([]any, error) {
	objs, err := i.Indexer.ByIndex(name, value)
	if i.catchUp != nil {
		i.catchUp()
	}
	return objs, err
}

// TestPlanFromAListOlderThanTheExpectationsIsNotExecuted: a sync whose pod list was taken before the cache
// showed the controller's last in-place update does not make that update again, even if the cache shows it
// by the time the plan would be executed.
func TestPlanFromAListOlderThanTheExpectationsIsNotExecuted(t *testing.T) {
	h := imageUpdateStarted(t)
	before := len(h.actions("patch", "pods"))
	h.ctrl.podIndex = catchingUpIndex{Indexer: h.ctrl.podIndex, catchUp: func() { h.showPods() }}
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("patch", "pods")) - before; got != 0 {
		t.Errorf("%d pod patches by a sync that listed the pods before the cache showed the update, want 0", got)
	}
}

func TestPruneUnusedTemplatesIsConditionalOnResourceVersion(t *testing.T) {
	tapp := testTApp(1)
	tapp.Spec.AutoDeleteUnusedTemplate = true
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"used": tapp.Spec.Template, "stale": tapp.Spec.Template}
	tapp.Spec.Templates = map[string]string{"0": "used"}
	h := newHarness(t, tapp)
	var patch string
	h.tapps.PrependReactor("patch", "tapps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		patch = string(a.(clienttesting.PatchAction).GetPatch())
		return false, nil, nil
	})
	_ = h.sync()
	if !strings.Contains(patch, `"resourceVersion":"1"`) || !strings.Contains(patch, `"stale":null`) || strings.Contains(patch, `"used"`) {
		t.Fatalf("patch = %s", patch)
	}
	if got := unusedTemplates(tapp); fmt.Sprint(got) != "[stale]" {
		t.Errorf("unusedTemplates = %v", got)
	}
}

func hasEvent(r *record.FakeRecorder, reason string) bool {
	for {
		select {
		case e := <-r.Events:
			if strings.Contains(e, " "+reason+" ") {
				return true
			}
		default:
			return false
		}
	}
}

var tappsGVR = tkestackv1.SchemeGroupVersion.WithResource("tapps")

func TestStatusIsWrittenOnTheCurrentTAppWhenTheCacheIsBehind(t *testing.T) {
	tests := []struct {
		name        string
		specChanged bool
		wantWritten bool
	}{
		{name: "only the status moved on", wantWritten: true},
		{name: "the spec changed since the plan", specChanged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testTApp(2))
			// The API holds a newer TApp than the cache: another status write, or a spec change.
			stored := h.storedTApp()
			stored.Status.AppStatus = "Pending"
			if tt.specChanged {
				stored.Generation++
			}
			if err := h.tapps.Tracker().Update(tappsGVR, stored, "ns"); err != nil {
				t.Fatal(err)
			}
			conflicts := 0
			h.tapps.PrependReactor("update", "tapps", func(a clienttesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() == "status" && a.(clienttesting.UpdateAction).GetObject().(*tkestackv1.TApp).Generation == 1 && conflicts == 0 {
					conflicts++
					return true, nil, apierrors.NewConflict(tappsGVR.GroupResource(), "web", errors.New("stale"))
				}
				return false, nil, nil
			})
			_ = h.sync()
			got := h.storedTApp()
			if written := got.Status.ObservedGeneration == 1; written != tt.wantWritten || conflicts != 1 {
				t.Errorf("status written = %v (observedGeneration %d, conflicts %d), want %v after one conflict",
					written, got.Status.ObservedGeneration, conflicts, tt.wantWritten)
			}
		})
	}
}

// gateWrites counts the pods/status patches sent so far.
func (h *harness) gateWrites() int {
	n := 0
	for _, a := range h.actions("patch", "pods") {
		if a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// TestNewPodsGateIsWrittenOnce: the readiness gate of a new pod is written right after its creation; a sync that
// sees the pod before the cache shows that write leaves the gate alone instead of writing it a second time from
// a stale resourceVersion. A gate write that failed is made by the next sync that sees the pod.
func TestNewPodsGateIsWrittenOnce(t *testing.T) {
	h := newHarness(t, testTApp(3))
	failNext := 0
	h.kube.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && failNext > 0 {
			failNext--
			return true, nil, apierrors.NewServiceUnavailable("busy")
		}
		return false, nil, nil
	})
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.gateWrites(); got != 3 {
		t.Fatalf("%d gate writes after creating 3 pods, want 3", got)
	}
	// The cache shows the pods as created, without the gate writes.
	indexer := h.kubeInf.Core().V1().Pods().Informer().GetIndexer()
	list, err := h.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		pod := &list.Items[i]
		pod.Status.Conditions = nil
		if err := indexer.Add(pod); err != nil {
			t.Fatal(err)
		}
		h.ctrl.podAdded(pod)
	}
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.gateWrites(); got != 3 {
		t.Errorf("%d gate writes after a sync on the stale cache, want still 3", got)
	}
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.gateWrites(); got != 3 {
		t.Errorf("%d gate writes once the cache shows them, want still 3", got)
	}

	// Scale to 4 with the new pod's gate write failing: the next sync that sees the pod writes it.
	tapp := testTApp(4)
	h.setTApp(tapp)
	failNext = 1
	_ = h.sync()
	if got := h.gateWrites(); got != 4 {
		t.Fatalf("%d gate writes after the failed one, want 4", got)
	}
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.gateWrites(); got != 5 {
		t.Errorf("%d gate writes after the sync that saw the pod without gate, want 5", got)
	}
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), "web-3", metav1.GetOptions{})
	if err != nil || inplace.GateStatus(pod) != corev1.ConditionTrue {
		t.Errorf("web-3: gate %q (%v), want True", inplace.GateStatus(pod), err)
	}
}

// TestStatusOnlyUpdatesDoNotResync: the controller's own status writes do not enqueue the TApp again; changes of
// the spec (generation), labels, annotations or deletion do, and so does a periodic resync (same object).
func TestStatusOnlyUpdatesDoNotResync(t *testing.T) {
	h := newHarness(t, testTApp(3))
	old := testTApp(3)
	for _, tc := range []struct {
		name   string
		change func(*tkestackv1.TApp)
		want   int
	}{
		{name: "status", change: func(a *tkestackv1.TApp) { a.Status.ReadyReplicas = 2 }, want: 0},
		{name: "resync", change: func(*tkestackv1.TApp) {}, want: 1},
		{name: "spec", change: func(a *tkestackv1.TApp) { a.Spec.Replicas = 4; a.Generation = 2 }, want: 1},
		{name: "labels", change: func(a *tkestackv1.TApp) { a.Labels = map[string]string{"tier": "web"} }, want: 1},
		{name: "annotations", change: func(a *tkestackv1.TApp) { a.Annotations = map[string]string{"note": "x"} }, want: 1},
		{name: "deletion", change: func(a *tkestackv1.TApp) { now := metav1.Now(); a.DeletionTimestamp = &now }, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for h.ctrl.queue.Len() > 0 {
				key, _ := h.ctrl.queue.Get()
				h.ctrl.queue.Done(key)
				h.ctrl.queue.Forget(key)
			}
			cur := old.DeepCopy()
			if tc.name != "resync" {
				cur.ResourceVersion = "2" // a write; a resync delivers the same version again
			}
			tc.change(cur)
			h.ctrl.tappUpdated(old, cur)
			if got := h.ctrl.queue.Len(); got != tc.want {
				t.Errorf("%d TApps queued, want %d", got, tc.want)
			}
		})
	}
}

// TestProgressOnlyStatusWritesArePaced: a status that only reports more instances' progress waits for
// statusPace after the last write; a condition that changes is written at once.
func TestProgressOnlyStatusWritesArePaced(t *testing.T) {
	h := newHarness(t, testTApp(2))
	clk := h.clock
	if err := h.sync(); err != nil { // creates the pods; the first status (observedGeneration 1) is written at once
		t.Fatal(err)
	}
	if got := h.storedTApp().Status; got.ObservedGeneration != 1 || got.Replicas != 0 {
		t.Fatalf("first status = %+v, want observedGeneration 1 and no replicas", got)
	}
	h.setTApp(h.storedTApp())
	// The API server makes every new pod Pending.
	list, _ := h.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	for i := range list.Items {
		list.Items[i].Status.Phase = corev1.PodPending
		if _, err := h.kube.CoreV1().Pods("ns").UpdateStatus(context.Background(), &list.Items[i], metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.storedTApp().Status.Replicas; got != 0 {
		t.Fatalf("replicas %d written within the pace, want the write to wait", got)
	}
	clk.Step(statusPace)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.storedTApp().Status; got.Replicas != 2 || got.ReadyReplicas != 0 {
		t.Fatalf("status after the pace = %d replicas, %d ready; want 2, 0", got.Replicas, got.ReadyReplicas)
	}
	// Both instances Ready: Available turns True, written although the pace has not passed.
	h.setTApp(h.storedTApp())
	h.markRunning()
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	got := h.storedTApp().Status
	if c := meta.FindStatusCondition(got.Conditions, tkestackv1.TAppAvailable); got.ReadyReplicas != 2 || c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("status = %d ready, Available %v; want 2 ready and Available True at once", got.ReadyReplicas, c)
	}
}

func TestProgressOnly(t *testing.T) {
	base := tkestackv1.TAppStatus{ObservedGeneration: 1, Replicas: 1, Statuses: map[string]tkestackv1.InstanceStatus{"0": "Pending"},
		Conditions: []metav1.Condition{{Type: tkestackv1.TAppAvailable, Status: metav1.ConditionFalse, Reason: "MinimumInstancesUnavailable", Message: "0 of 2"}}}
	tests := []struct {
		name   string
		change func(*tkestackv1.TAppStatus)
		want   bool
	}{
		{"counts, instances and messages", func(s *tkestackv1.TAppStatus) {
			s.Replicas, s.ReadyReplicas, s.Statuses = 2, 1, map[string]tkestackv1.InstanceStatus{"0": "Running", "1": "Pending"}
			s.Conditions[0].Message = "1 of 2"
		}, true},
		{"an instance entering Updating", func(s *tkestackv1.TAppStatus) {
			s.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Updating"}
		}, false},
		{"an instance appearing Failed", func(s *tkestackv1.TAppStatus) {
			s.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Pending", "1": "Failed"}
		}, false},
		{"observed generation", func(s *tkestackv1.TAppStatus) { s.ObservedGeneration = 2 }, false},
		{"update revision", func(s *tkestackv1.TAppStatus) { s.UpdateRevision = "web-2" }, false},
		{"app status", func(s *tkestackv1.TAppStatus) { s.AppStatus = "Running" }, false},
		{"condition status", func(s *tkestackv1.TAppStatus) { s.Conditions[0].Status = metav1.ConditionTrue }, false},
		{"condition reason", func(s *tkestackv1.TAppStatus) { s.Conditions[0].Reason = "Other" }, false},
		{"condition added", func(s *tkestackv1.TAppStatus) {
			s.Conditions = append(s.Conditions, metav1.Condition{Type: tkestackv1.TAppReplicaFailure, Status: metav1.ConditionTrue})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := *base.DeepCopy()
			tt.change(&next)
			if got := progressOnly(&base, &next); got != tt.want {
				t.Errorf("progressOnly = %v, want %v", got, tt.want)
			}
		})
	}
	updating := *base.DeepCopy()
	updating.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Updating"}
	if !progressOnly(&updating, &base) {
		t.Error("an instance leaving Updating for Pending is not progress only")
	}
}

// TestOneClock: the controller's expectations and its in-place updater read the clock the controller was
// built with: the pod writes the cache does not show hold the TApp back until that clock has moved past
// expectations.TTL, and the readiness-gate condition of an in-place update is stamped with its time.
func TestOneClock(t *testing.T) {
	h := newHarness(t, testTApp(1))
	h.clock.Step(1000 * time.Hour) // far from the wall clock
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	// The cache does not show web-0: its create is expected, and the plan is not executed again.
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("create", "pods")); got != 1 {
		t.Fatalf("%d pod creates while the first is expected, want 1", got)
	}
	h.clock.Step(expectations.TTL + time.Second)
	_ = h.sync() // the plan creates web-0 again: the fake API refuses it, the pod exists
	if got := len(h.actions("create", "pods")); got != 2 {
		t.Fatalf("%d pod creates once the controller's clock passed the expectations' TTL, want 2", got)
	}

	h.markRunning()
	h.showPods()
	h.updateImage(testTApp(1), "nginx:2")
	var gate *corev1.PodCondition
	pod := h.apiPod("web-0")
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == inplace.ReadinessGate {
			gate = &pod.Status.Conditions[i]
		}
	}
	if gate == nil || gate.Status != corev1.ConditionFalse {
		t.Fatalf("readiness gate condition %+v, want False: the in-place update begun", gate)
	}
	if got, want := gate.LastTransitionTime.Unix(), h.clock.Now().Unix(); got != want {
		t.Errorf("readiness gate set False at %v, want the controller's clock's %v", gate.LastTransitionTime, h.clock.Now())
	}
}

// TestUndefaultedTAppIsNotSynced: the policy never fills in a default; a TApp without the fields the API
// server defaults (which the server never serves) gets a warning event and no action.
func TestUndefaultedTAppIsNotSynced(t *testing.T) {
	h := newHarness(t, testTApp(2))
	undefaulted := testTApp(2)
	undefaulted.Spec.UpdateStrategy.MaxUnavailable = nil
	undefaulted.Spec.RevisionHistoryLimit = nil
	if err := h.tappInf.TKEStackApps().V1().TApps().Informer().GetIndexer().Update(undefaulted); err != nil {
		t.Fatal(err)
	}
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.kube.Actions()); got != 0 {
		t.Errorf("%d API calls for an undefaulted TApp: %v", got, h.kube.Actions())
	}
	if !hasEvent(h.recorder, ReasonUndefaulted) {
		t.Errorf("no %s event", ReasonUndefaulted)
	}
	// The same TApp defaulted is synced.
	h.setTApp(undefaulted)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("create", "pods")); got != 2 {
		t.Errorf("%d pod creates once defaulted, want 2", got)
	}
}

// TestNoCreatesForADeletedTApp: the cache still shows a TApp the server has deleted (the garbage collector
// deleting its pods wakes the sync before the informer shows the deletion), or replaced by another of the
// same name: no pod is created for it.
func TestNoCreatesForADeletedTApp(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(h *harness)
	}{
		{"deleted", func(h *harness) {
			if err := h.tapps.TKEStackAppsV1().TApps("ns").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced", func(h *harness) {
			other := h.storedTApp().DeepCopy()
			other.UID = "another-uid"
			if _, err := h.tapps.TKEStackAppsV1().TApps("ns").Update(context.Background(), other, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"being deleted", func(h *harness) {
			deleting := h.storedTApp().DeepCopy()
			now := metav1.Now()
			deleting.DeletionTimestamp = &now
			if _, err := h.tapps.TKEStackAppsV1().TApps("ns").Update(context.Background(), deleting, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, testTApp(3))
			c.change(h)
			_ = h.sync()
			if got := len(h.actions("create", "pods")); got != 0 {
				t.Errorf("%d pods created for a TApp the server no longer has", got)
			}
		})
	}
	// The control: the same sync creates the pods of a TApp the server has.
	h := newHarness(t, testTApp(3))
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("create", "pods")); got != 3 {
		t.Errorf("%d pods created, want 3", got)
	}
}
