package inplace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

type sentPatch struct {
	subresource string
	data        []byte
}

// apiServer wraps a fake clientset with a pod patch handler that behaves like the API server on what matters
// here: a metadata.resourceVersion in the patch is a precondition (Conflict otherwise), a metadata.uid other
// than the pod's is refused as an immutable-field change (422), every write bumps the resourceVersion, the
// status subresource only changes status and the main resource never changes status.
type apiServer struct {
	*fake.Clientset
	patches []sentPatch
	gets    int
	// afterStatusWrite, if set, runs after every pods/status patch (the kubelet reacting to it).
	afterStatusWrite func(*corev1.Pod)
}

func newAPIServer(t *testing.T, pods ...*corev1.Pod) *apiServer {
	t.Helper()
	objs := make([]runtime.Object, 0, len(pods))
	for _, p := range pods {
		objs = append(objs, p.DeepCopy())
	}
	s := &apiServer{Clientset: fake.NewClientset(objs...)}
	s.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		s.gets++
		return false, nil, nil
	})
	s.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pa := action.(k8stesting.PatchAction)
		s.patches = append(s.patches, sentPatch{subresource: pa.GetSubresource(), data: pa.GetPatch()})
		obj, err := s.Tracker().Get(podsGVR, pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		cur := obj.(*corev1.Pod)
		if pa.GetPatchType() == types.JSONPatchType {
			// Test operations that fail answer 422, as the API server does.
			patch, err := jsonpatch.DecodePatch(pa.GetPatch())
			if err != nil {
				return true, nil, apierrors.NewBadRequest(err.Error())
			}
			curJSON, _ := json.Marshal(cur)
			out, err := patch.Apply(curJSON)
			if err != nil {
				return true, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", schema.GroupResource{}, "", err.Error(), 0, false)
			}
			result := &corev1.Pod{}
			if err := json.Unmarshal(out, result); err != nil {
				return true, nil, err
			}
			if pa.GetSubresource() == "status" {
				// pods/status changes status and metadata, never the spec or the owners.
				result.Spec, result.OwnerReferences = cur.Spec, cur.OwnerReferences
			} else {
				result.Status = cur.Status
			}
			s.bumpRV(result)
			if err := s.Tracker().Update(podsGVR, result, result.Namespace); err != nil {
				return true, nil, err
			}
			if pa.GetSubresource() == "status" && s.afterStatusWrite != nil {
				s.afterStatusWrite(result)
			}
			return true, result.DeepCopy(), nil
		}
		if pa.GetPatchType() != types.StrategicMergePatchType {
			t.Errorf("unexpected patch type %s", pa.GetPatchType())
		}
		var pre struct {
			Metadata struct {
				ResourceVersion string    `json:"resourceVersion"`
				UID             types.UID `json:"uid"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(pa.GetPatch(), &pre); err != nil {
			return true, nil, err
		}
		if uid := pre.Metadata.UID; uid != "" && uid != cur.UID {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, cur.Name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")})
		}
		if rv := pre.Metadata.ResourceVersion; rv != "" && rv != cur.ResourceVersion {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, cur.Name,
				errors.New("the object has been modified"))
		}
		curJSON, _ := json.Marshal(cur)
		merged, err := strategicpatch.StrategicMergePatch(curJSON, pa.GetPatch(), &corev1.Pod{})
		if err != nil {
			return true, nil, err
		}
		patched := &corev1.Pod{}
		if err := json.Unmarshal(merged, patched); err != nil {
			return true, nil, err
		}
		result := cur.DeepCopy()
		if pa.GetSubresource() == "status" {
			result.Status = patched.Status
		} else {
			patched.Status = cur.Status
			result = patched
		}
		s.bumpRV(result)
		if err := s.Tracker().Update(podsGVR, result, result.Namespace); err != nil {
			return true, nil, err
		}
		if pa.GetSubresource() == "status" && s.afterStatusWrite != nil {
			s.afterStatusWrite(result)
		}
		return true, result.DeepCopy(), nil
	})
	return s
}

func (s *apiServer) bumpRV(p *corev1.Pod) {
	n, _ := strconv.Atoi(p.ResourceVersion)
	p.ResourceVersion = strconv.Itoa(n + 1)
}

// stored returns the pod as stored.
func (s *apiServer) stored(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	obj, err := s.Tracker().Get(podsGVR, pod.Namespace, pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.Pod)
}

// kubelet stores a status change made by the kubelet.
func (s *apiServer) kubelet(t *testing.T, pod *corev1.Pod, mutate func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	p := s.stored(t, pod).DeepCopy()
	mutate(p)
	s.bumpRV(p)
	if err := s.Tracker().Update(podsGVR, p, p.Namespace); err != nil {
		t.Fatal(err)
	}
	return p.DeepCopy()
}

// patchedConditionTypes returns the condition types a status patch (strategic merge or JSON) writes.
func patchedConditionTypes(t *testing.T, data []byte) []corev1.PodConditionType {
	t.Helper()
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(data, &ops) == nil {
		var types []corev1.PodConditionType
		for _, op := range ops {
			if op.Op == "test" || !strings.HasPrefix(op.Path, "/status/conditions") {
				continue
			}
			var c corev1.PodCondition
			if op.Path == "/status/conditions" {
				var cs []corev1.PodCondition
				if err := json.Unmarshal(op.Value, &cs); err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					types = append(types, c.Type)
				}
				continue
			}
			if err := json.Unmarshal(op.Value, &c); err != nil {
				t.Fatalf("%s %s: %v", op.Op, op.Path, err)
			}
			types = append(types, c.Type)
		}
		return types
	}
	var p struct {
		Status struct {
			Conditions []corev1.PodCondition `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	var types []corev1.PodConditionType
	for _, c := range p.Status.Conditions {
		types = append(types, c.Type)
	}
	return types
}

func condition(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func TestBeginWritesOnlyTheGateCondition(t *testing.T) {
	ctx := context.Background()
	pod := podFrom(template())
	pristine := pod.DeepCopy()
	s := newAPIServer(t, pod)
	clk := testingclock.NewFakePassiveClock(t0)
	u := &Updater{Client: s, Clock: clk}

	out, err := u.Begin(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pod, pristine) {
		t.Fatal("Begin modified its input")
	}
	if len(s.patches) != 1 || s.patches[0].subresource != "status" {
		t.Fatalf("patches = %v, want one pods/status patch", s.patches)
	}
	if types := patchedConditionTypes(t, s.patches[0].data); !reflect.DeepEqual(types, []corev1.PodConditionType{ReadinessGate}) {
		t.Errorf("status patch writes conditions %v, want only %s", types, ReadinessGate)
	}
	got := s.stored(t, pod)
	gate := condition(got, ReadinessGate)
	if gate == nil || gate.Status != corev1.ConditionFalse || gate.Reason != ReasonUpdating || !gate.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("gate condition = %+v, want False/%s at %v", gate, ReasonUpdating, t0)
	}
	if ready := condition(got, corev1.PodReady); !equality.Semantic.DeepEqual(ready, condition(pristine, corev1.PodReady)) {
		t.Errorf("Ready condition was written: %+v", ready)
	}
	if !reflect.DeepEqual(got.Spec, pristine.Spec) || !reflect.DeepEqual(got.Labels, pristine.Labels) {
		t.Error("Begin changed more than status")
	}
	if out.ResourceVersion != got.ResourceVersion {
		t.Errorf("returned resourceVersion %s, stored %s", out.ResourceVersion, got.ResourceVersion)
	}

	// Again, later: nothing written, no flapping.
	clk.SetTime(t0.Add(time.Minute))
	if _, err := u.Begin(ctx, out); err != nil {
		t.Fatal(err)
	}
	if len(s.patches) != 1 {
		t.Errorf("second Begin wrote again: %d patches", len(s.patches))
	}
}

func TestBeginWithoutReadinessGateWritesNothing(t *testing.T) {
	pod := podFrom(template())
	pod.Spec.ReadinessGates = nil
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	if _, err := u.Begin(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if len(s.patches) != 0 {
		t.Errorf("patches = %d, want none", len(s.patches))
	}
}

// TestBeginIgnoresNewerStatusWrites: the kubelet wrote the status after the cache saw the pod. Begin's write is
// bound to the pod's UID, not its resourceVersion: one patch, no re-read, and the kubelet's write is kept.
func TestBeginIgnoresNewerStatusWrites(t *testing.T) {
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	s.kubelet(t, pod, func(p *corev1.Pod) { p.Status.ContainerStatuses[1].RestartCount = 3 })
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}

	if _, err := u.Begin(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if len(s.patches) != 1 || s.gets != 0 {
		t.Errorf("patches = %d, gets = %d; want one patch and no read", len(s.patches), s.gets)
	}
	if strings.Contains(string(s.patches[0].data), "resourceVersion") || !strings.Contains(string(s.patches[0].data), string(pod.UID)) {
		t.Errorf("patch %s: want the pod's UID as precondition and no resourceVersion", s.patches[0].data)
	}
	got := s.stored(t, pod)
	if GateStatus(got) != corev1.ConditionFalse || got.Status.ContainerStatuses[1].RestartCount != 3 {
		t.Errorf("stored pod: gate %s, log restarts %d", GateStatus(got), got.Status.ContainerStatuses[1].RestartCount)
	}
}

func TestBeginStopsWhenThePodWasReplaced(t *testing.T) {
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	s.kubelet(t, pod, func(p *corev1.Pod) { p.UID = "uid-2" }) // deleted and recreated under the same name
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	_, err := u.Begin(context.Background(), pod)
	if !errors.Is(err, ErrPodReplaced) {
		t.Fatalf("Begin error = %v, want ErrPodReplaced", err)
	}
	if len(s.patches) != 1 || GateStatus(s.stored(t, pod)) != corev1.ConditionTrue {
		t.Error("the new pod was written")
	}
}

func TestBeginSurfacesPersistentConflict(t *testing.T) {
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	s.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name, errors.New("busy"))
	})
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	_, err := u.Begin(context.Background(), pod)
	if !apierrors.IsConflict(err) {
		t.Fatalf("Begin error = %v, want a conflict", err)
	}
}

func TestInPlaceUpdateFlow(t *testing.T) {
	ctx := context.Background()
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	clk := testingclock.NewFakePassiveClock(t0)
	u := &Updater{Client: s, Clock: clk, FieldManager: "tapp-controller"}
	target := imageUpdate("app", "nginx:1.26")
	target.Revision, target.Labels, target.RemoveLabels = "h2", map[string]string{"tapp_template_hash_key": "h2"}, []string{"tier"}

	begun, err := u.Begin(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	clk.SetTime(t0.Add(time.Second))
	applied, err := u.Apply(ctx, begun, target)
	if err != nil {
		t.Fatal(err)
	}
	got := s.stored(t, pod)
	if applied.ResourceVersion != got.ResourceVersion {
		t.Errorf("Apply returned resourceVersion %s, stored %s", applied.ResourceVersion, got.ResourceVersion)
	}
	if im := imagesOf(got); im["app"] != "nginx:1.26" || im["log"] != "fluentbit:2" || im["istio-proxy"] != "proxy:1" {
		t.Errorf("images = %v", im)
	}
	if _, found := got.Labels["tier"]; found || got.Labels["tapp_template_hash_key"] != "h2" || got.Labels["foreign"] != "keep" {
		t.Errorf("labels = %v", got.Labels)
	}
	if !InProgress(got) {
		t.Fatal("no state annotation after Apply")
	}
	if s.patches[1].subresource != "" {
		t.Errorf("Apply patched subresource %q", s.patches[1].subresource)
	}
	if GateStatus(got) != corev1.ConditionFalse {
		t.Error("Apply changed the gate condition")
	}
	if done, _ := Finished(got); done {
		t.Fatal("done before the kubelet restarted the container")
	}

	// The kubelet restarts app with the new image.
	restarted := s.kubelet(t, pod, func(p *corev1.Pod) {
		setStatus(p, running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1))
	})
	if done, failed := Finished(restarted); !done || failed {
		t.Fatalf("Finished = %v, %v; want done", done, failed)
	}
	clk.SetTime(t0.Add(time.Minute))
	if _, err := u.Complete(ctx, restarted); err != nil {
		t.Fatal(err)
	}
	got = s.stored(t, pod)
	gate := condition(got, ReadinessGate)
	if gate.Status != corev1.ConditionTrue || gate.Reason != ReasonUpdated || gate.Message != "" || !gate.LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("gate after Complete = %+v", gate)
	}
	if _, found := got.Annotations[StateAnnotation]; found {
		t.Error("state annotation not removed by Complete")
	}
	if got.Annotations["tkestack.io/portmapping"] != "pod-value" || got.Annotations["foreign"] != "keep" {
		t.Errorf("annotations = %v", got.Annotations)
	}
	if ready := condition(got, corev1.PodReady); !equality.Semantic.DeepEqual(ready, condition(pod, corev1.PodReady)) {
		t.Errorf("Ready condition was written: %+v", ready)
	}
	for _, p := range s.patches {
		if p.subresource == "status" {
			if types := patchedConditionTypes(t, p.data); !reflect.DeepEqual(types, []corev1.PodConditionType{ReadinessGate}) {
				t.Errorf("a status patch wrote conditions %v", types)
			}
		}
	}

	// Every write is made under the controller's field manager.
	for _, a := range s.Actions() {
		if pa, ok := a.(k8stesting.PatchActionImpl); ok && pa.PatchOptions.FieldManager != "tapp-controller" {
			t.Errorf("patch of %s/%s under field manager %q, want tapp-controller", pa.GetResource().Resource, pa.GetSubresource(), pa.PatchOptions.FieldManager)
		}
	}

	// Complete again: nothing to write.
	n := len(s.patches)
	if _, err := u.Complete(ctx, got); err != nil {
		t.Fatal(err)
	}
	if len(s.patches) != n {
		t.Errorf("second Complete wrote %d patches: %s", len(s.patches)-n, s.patches[n].data)
	}
}

func TestApplyRequiresBegin(t *testing.T) {
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	_, err := u.Apply(context.Background(), pod, imageUpdate("app", "nginx:1.26"))
	if !errors.Is(err, ErrNotBegun) {
		t.Fatalf("Apply error = %v, want ErrNotBegun", err)
	}
	if len(s.patches) != 0 {
		t.Errorf("patches = %d, want none", len(s.patches))
	}
}

func TestApplyIgnoresChangesItDoesNotTouch(t *testing.T) {
	previous := template()
	pod := podFrom(previous)
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	begun, err := u.Begin(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	// The kubelet reports the gate (a new resourceVersion) and someone labels the pod after we read it.
	s.kubelet(t, pod, func(p *corev1.Pod) { p.Labels["someone"] = "else" })

	applied, err := u.Apply(context.Background(), begun, imageUpdate("app", "nginx:1.26"))
	if err != nil {
		t.Fatalf("Apply error = %v, want the update applied", err)
	}
	got := s.stored(t, pod)
	if imagesOf(got)["app"] != "nginx:1.26" || !InProgress(got) || got.Labels["someone"] != "else" {
		t.Errorf("stored pod: images %v, in progress %v, labels %v; want the new image, the state and the other label",
			imagesOf(got), InProgress(got), got.Labels)
	}
	if applied.ResourceVersion != got.ResourceVersion || s.gets != 0 {
		t.Errorf("Apply returned resourceVersion %s (stored %s), gets %d", applied.ResourceVersion, got.ResourceVersion, s.gets)
	}
}

func TestApplyRefusesAReplacedPod(t *testing.T) {
	previous := template()
	pod := podFrom(previous)
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	begun, err := u.Begin(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	// The pod is deleted and created again under the same name.
	s.kubelet(t, pod, func(p *corev1.Pod) { p.UID = "uid-2" })

	_, err = u.Apply(context.Background(), begun, imageUpdate("app", "nginx:1.26"))
	if !errors.Is(err, ErrPodReplaced) {
		t.Fatalf("Apply error = %v, want ErrPodReplaced", err)
	}
	if got := s.stored(t, pod); imagesOf(got)["app"] != "nginx:1.25" || InProgress(got) {
		t.Error("the new pod was changed")
	}
}

func TestApplyMetadataOnlyNeedsNoBegin(t *testing.T) {
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	note := Update{Annotations: map[string]string{"note": "y"}}
	if _, err := u.Apply(context.Background(), pod, note); err != nil {
		t.Fatal(err)
	}
	got := s.stored(t, pod)
	if got.Annotations["note"] != "y" || InProgress(got) || GateStatus(got) != corev1.ConditionTrue {
		t.Errorf("annotations %v, gate %s", got.Annotations, GateStatus(got))
	}
	if len(s.patches) != 1 || s.patches[0].subresource != "" {
		t.Errorf("patches = %v, want one metadata patch", s.patches)
	}

	// Nothing to change: nothing written.
	if _, err := u.Apply(context.Background(), got, note); err != nil {
		t.Fatal(err)
	}
	if len(s.patches) != 1 {
		t.Errorf("a no-op Apply wrote a patch")
	}
}

func TestCompleteLeavesANewerUpdateAlone(t *testing.T) {
	ctx := context.Background()
	previous := template()
	pod := podFrom(previous)
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	begun, err := u.Begin(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	first, err := u.Apply(ctx, begun, imageUpdate("app", "nginx:1.26"))
	if err != nil {
		t.Fatal(err)
	}
	// A newer update is applied while a stale copy of the first is being completed.
	second, err := u.Apply(ctx, first, imageUpdate("app", "nginx:1.27"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Complete(ctx, first); !errors.Is(err, ErrStateChanged) {
		t.Fatalf("Complete error = %v, want ErrStateChanged", err)
	}
	got := s.stored(t, pod)
	if GateStatus(got) != corev1.ConditionFalse || got.Annotations[StateAnnotation] != second.Annotations[StateAnnotation] {
		t.Errorf("the newer update was disturbed: gate %s, state %q", GateStatus(got), got.Annotations[StateAnnotation])
	}
}

func TestEnsureReadinessGateTrue(t *testing.T) {
	ctx := context.Background()
	fresh := podFrom(template())
	fresh.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady"}}
	s := newAPIServer(t, fresh)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}

	out, err := u.EnsureReadinessGateTrue(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	gate := condition(s.stored(t, fresh), ReadinessGate)
	if gate == nil || gate.Status != corev1.ConditionTrue || gate.Reason != ReasonNotUpdating || !gate.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("gate = %+v", gate)
	}
	if ready := condition(s.stored(t, fresh), corev1.PodReady); ready.Status != corev1.ConditionFalse {
		t.Error("Ready was written; it is the kubelet's")
	}
	if _, err := u.EnsureReadinessGateTrue(ctx, out); err != nil || len(s.patches) != 1 {
		t.Errorf("second call: err %v, patches %d; want no write", err, len(s.patches))
	}

	// A pod with an update in progress is refused.
	updating := podFrom(template())
	updating.Name = "web-1"
	updating.Status.Conditions[1].Status = corev1.ConditionFalse
	updating.Annotations[StateAnnotation] = `{"containers":{"app":{"newImage":"nginx:1.26"}}}`
	s2 := newAPIServer(t, updating)
	u2 := &Updater{Client: s2}
	if _, err := u2.EnsureReadinessGateTrue(ctx, updating); !errors.Is(err, ErrInProgress) {
		t.Errorf("error = %v, want ErrInProgress", err)
	}
	if len(s2.patches) != 0 {
		t.Error("wrote to a pod with an update in progress")
	}
}

func TestEnsureReadinessGateTrueRechecksAfterConflict(t *testing.T) {
	// Our copy shows no update in progress, but the stored pod has one: the retry must notice.
	pod := podFrom(template())
	pod.Status.Conditions[1].Status = corev1.ConditionFalse
	s := newAPIServer(t, pod)
	s.kubelet(t, pod, func(p *corev1.Pod) {
		p.Annotations[StateAnnotation] = `{"containers":{"app":{"newImage":"nginx:1.26"}}}`
	})
	u := &Updater{Client: s}
	if _, err := u.EnsureReadinessGateTrue(context.Background(), pod); !errors.Is(err, ErrInProgress) {
		t.Fatalf("error = %v, want ErrInProgress", err)
	}
	if GateStatus(s.stored(t, pod)) != corev1.ConditionFalse {
		t.Error("gate set True on a pod with an update in progress")
	}
}

func TestGateWritesGoThroughTheStatusClient(t *testing.T) {
	pod := podFrom(template())
	status := newAPIServer(t, pod)
	main := fake.NewClientset()
	u := &Updater{Client: main, StatusClient: status, Clock: testingclock.NewFakePassiveClock(t0)}
	if _, err := u.Begin(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if len(status.patches) != 1 || status.patches[0].subresource != "status" {
		t.Errorf("patches through the status client = %+v, want one of pods/status", status.patches)
	}
	if n := len(main.Actions()); n != 0 {
		t.Errorf("%d requests through the main client, want 0", n)
	}
}

func TestCompleteIgnoresTheKubeletsStatusWrites(t *testing.T) {
	ctx := context.Background()
	s, u, pod, applied := updateApplied(t)
	// The kubelet writes the pod's status (the restarted container) after the copy Complete is given was read.
	s.kubelet(t, pod, func(p *corev1.Pod) { p.Status.Message = "kubelet was here" })
	n := len(s.patches)
	done, err := u.Complete(ctx, applied)
	if err != nil {
		t.Fatal(err)
	}
	got := s.stored(t, pod)
	if InProgress(got) || GateStatus(got) != corev1.ConditionTrue || InProgress(done) {
		t.Errorf("after Complete: in progress %v, gate %s; want done and True", InProgress(got), GateStatus(got))
	}
	if got.Status.Message != "kubelet was here" || condition(got, corev1.PodReady) == nil {
		t.Errorf("the kubelet's status was lost: message %q, conditions %+v", got.Status.Message, got.Status.Conditions)
	}
	if s.gets != 0 {
		t.Errorf("Complete re-read the pod %d times; the kubelet's status write must not make it fail", s.gets)
	}
	// One write, through pods/status, ends the update.
	if len(s.patches)-n != 1 || s.patches[n].subresource != "status" {
		t.Errorf("Complete sent %d patches (%+v), want one of pods/status", len(s.patches)-n, s.patches[n:])
	}
}

func TestCompleteLeavesAStateItDidNotSee(t *testing.T) {
	ctx := context.Background()
	s, u, pod, applied := updateApplied(t)
	// Before Complete writes, another writer replaces the state annotation.
	s.kubelet(t, pod, func(p *corev1.Pod) { p.Annotations[StateAnnotation] = `{"revision":"other"}` })
	if _, err := u.Complete(ctx, applied); !errors.Is(err, ErrStateChanged) {
		t.Fatalf("Complete error = %v, want ErrStateChanged", err)
	}
	got := s.stored(t, pod)
	if got.Annotations[StateAnnotation] != `{"revision":"other"}` {
		t.Errorf("state annotation = %q, want the other writer's", got.Annotations[StateAnnotation])
	}
	if GateStatus(got) != corev1.ConditionFalse {
		t.Errorf("gate = %s; it must stay False while the other update is in progress", GateStatus(got))
	}
}

func TestCompleteFollowsMovedConditions(t *testing.T) {
	ctx := context.Background()
	s, u, pod, applied := updateApplied(t)
	// The kubelet rewrites the conditions in another order: the gate is no longer where Complete saw it.
	s.kubelet(t, pod, func(p *corev1.Pod) {
		c := p.Status.Conditions
		for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
			c[i], c[j] = c[j], c[i]
		}
	})
	if _, err := u.Complete(ctx, applied); err != nil {
		t.Fatal(err)
	}
	got := s.stored(t, pod)
	if InProgress(got) || GateStatus(got) != corev1.ConditionTrue {
		t.Errorf("after Complete: in progress %v, gate %s; want done and True", InProgress(got), GateStatus(got))
	}
	if len(got.Status.Conditions) != len(applied.Status.Conditions) {
		t.Errorf("conditions %+v, want %d of them", got.Status.Conditions, len(applied.Status.Conditions))
	}
	if s.gets != 1 {
		t.Errorf("re-reads = %d, want 1 after the failed test of the condition's position", s.gets)
	}
}

func TestCompleteKeepsConditionsWrittenSinceItsRead(t *testing.T) {
	ctx := context.Background()
	s, u, pod, applied := updateApplied(t)
	// Complete is given a copy without any condition; the kubelet has written its conditions since.
	stale := applied.DeepCopy()
	stale.Status.Conditions = nil
	s.kubelet(t, pod, func(p *corev1.Pod) { p.Status.Message = "kubelet was here" })
	if _, err := u.Complete(ctx, stale); err != nil {
		t.Fatal(err)
	}
	got := s.stored(t, pod)
	if condition(got, corev1.PodReady) == nil || len(got.Status.Conditions) != len(applied.Status.Conditions) {
		t.Errorf("conditions = %+v: the kubelet's were replaced", got.Status.Conditions)
	}
	if InProgress(got) || GateStatus(got) != corev1.ConditionTrue {
		t.Errorf("after Complete: in progress %v, gate %s; want done and True", InProgress(got), GateStatus(got))
	}
}

func TestCompleteRefusesAReplacedPod(t *testing.T) {
	ctx := context.Background()
	s, u, pod, applied := updateApplied(t)
	s.kubelet(t, pod, func(p *corev1.Pod) { p.UID = "uid-other" })
	if _, err := u.Complete(ctx, applied); !errors.Is(err, ErrPodReplaced) {
		t.Fatalf("Complete error = %v, want ErrPodReplaced", err)
	}
	if got := s.stored(t, pod); GateStatus(got) != corev1.ConditionFalse || !InProgress(got) {
		t.Error("Complete wrote to another pod of the same name")
	}
}

// updateApplied returns a fake API server holding a pod of template() being moved in place to nginx:1.26
// (Begin and Apply done), the Updater, the pod as created and the pod Apply returned.
func updateApplied(t *testing.T) (*apiServer, *Updater, *corev1.Pod, *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	previous := template()
	pod := podFrom(previous)
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	begun, err := u.Begin(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := u.Apply(ctx, begun, imageUpdate("app", "nginx:1.26"))
	if err != nil {
		t.Fatal(err)
	}
	return s, u, pod, applied
}

func TestInitReadinessGateIgnoresOtherStatusWrites(t *testing.T) {
	ctx := context.Background()
	created := podFrom(template())
	created.Status = corev1.PodStatus{Phase: corev1.PodPending}
	s := newAPIServer(t, created)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	// The scheduler writes the pod's status before our first write.
	s.kubelet(t, created, func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	})
	if _, err := u.InitReadinessGate(ctx, created); err != nil {
		t.Fatal(err)
	}
	got := s.stored(t, created)
	if gate := condition(got, ReadinessGate); gate == nil || gate.Status != corev1.ConditionTrue || gate.Reason != ReasonNotUpdating {
		t.Errorf("gate = %+v, want True/%s", gate, ReasonNotUpdating)
	}
	if condition(got, corev1.PodScheduled) == nil {
		t.Error("the scheduler's condition was lost")
	}
	if s.gets != 0 || len(s.patches) != 1 {
		t.Errorf("gets %d, patches %d; want one patch and no re-read", s.gets, len(s.patches))
	}

	// A pod of the same name created by someone else in between is not written.
	replaced := created.DeepCopy()
	replaced.UID = "uid-other"
	other := newAPIServer(t, replaced)
	u.Client = other
	if _, err := u.InitReadinessGate(ctx, created); err == nil {
		t.Error("InitReadinessGate wrote the gate of another pod of the same name")
	}
	if condition(other.stored(t, replaced), ReadinessGate) != nil {
		t.Error("the other pod's gate was written")
	}
}

// TestBeginCanceled: a status write that fails because the context was cancelled (the server stopping) is an
// error, never a nil pod without one (retry.OnError swallows errors that wait.Interrupted matches).
func TestBeginCanceled(t *testing.T) {
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	ctx, cancel := context.WithCancel(context.Background())
	s.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		cancel()
		return true, nil, fmt.Errorf("client rate limiter Wait returned an error: %w", context.Canceled)
	})
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	out, err := u.Begin(ctx, pod)
	if err == nil || out != nil {
		t.Fatalf("Begin with a cancelled write = %v, %v; want no pod and an error", out, err)
	}
}
