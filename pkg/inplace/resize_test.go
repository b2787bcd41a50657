package inplace

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

func resources(cpu, memory string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

func resizeUpdate(name string, r corev1.ResourceRequirements) Update {
	return Update{Revision: "h2", Resources: map[string]corev1.ResourceRequirements{name: r},
		Labels: map[string]string{"tapp_template_hash_key": "h2"}}
}

func TestApplyResizesThroughTheResizeSubresource(t *testing.T) {
	tpl := template()
	tpl.Spec.Containers[0].Resources = resources("100m", "64Mi")
	pod := podFrom(tpl)
	s := newAPIServer(t, pod)
	u := &Updater{Client: s, Clock: testingclock.NewFakePassiveClock(t0)}
	want := resources("200m", "128Mi")
	if _, err := u.Apply(context.Background(), pod, resizeUpdate("app", want)); err != nil {
		t.Fatal(err)
	}
	if len(s.patches) != 2 || s.patches[0].subresource != "resize" || s.patches[1].subresource != "" {
		t.Fatalf("patches = %v, want pods/resize then the metadata patch", s.patches)
	}
	var ops []map[string]any
	if err := json.Unmarshal(s.patches[0].data, &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0]["path"] != "/metadata/uid" || ops[0]["value"] != "uid-1" ||
		ops[1]["op"] != "test" || ops[1]["path"] != "/spec/containers/0/name" || ops[1]["value"] != "app" ||
		ops[2]["op"] != "replace" || ops[2]["path"] != "/spec/containers/0/resources" {
		t.Errorf("resize patch = %s", s.patches[0].data)
	}
	if strings.Contains(string(s.patches[1].data), `"spec"`) {
		t.Errorf("the metadata patch carries resources: %s", s.patches[1].data)
	}
	got := s.stored(t, pod)
	if !equality.Semantic.DeepEqual(got.Spec.Containers[0].Resources, want) {
		t.Errorf("resources = %v, want %v", got.Spec.Containers[0].Resources, want)
	}
	state, ok := ParseState(got)
	if !ok || len(state.Containers) != 0 || !equality.Semantic.DeepEqual(state.Resize["app"].Resources, want) {
		t.Fatalf("state = %+v", state)
	}
	// No begin: a resize does not take the pod out of endpoints.
	if GateStatus(got) != corev1.ConditionTrue {
		t.Errorf("gate = %s", GateStatus(got))
	}
	// Same resources again: nothing written.
	if _, err := u.Apply(context.Background(), got, resizeUpdate("app", want)); err != nil {
		t.Fatal(err)
	}
	if len(s.patches) != 2 {
		t.Errorf("a no-op resize wrote %d patches", len(s.patches)-2)
	}
}

func TestApplyRefusesAResizeOfAReplacedPod(t *testing.T) {
	pod := podFrom(template())
	s := newAPIServer(t, pod)
	stale := pod.DeepCopy()
	stale.UID = "uid-old"
	u := &Updater{Client: s}
	if _, err := u.Apply(context.Background(), stale, resizeUpdate("app", resources("1", "1Gi"))); err == nil {
		t.Fatal("resize of a replaced pod succeeded")
	}
	if len(s.patches) != 1 {
		t.Errorf("patches = %v, want the refused resize only", s.patches)
	}
}

func TestCheckResize(t *testing.T) {
	want := resources("200m", "128Mi")
	tpl := template()
	tpl.Spec.Containers[0].Resources = resources("100m", "64Mi")
	base, err := UpdatedPod(podFrom(tpl), resizeUpdate("app", want), t0)
	if err != nil {
		t.Fatal(err)
	}
	old := resources("100m", "64Mi")
	withStatus := func(r corev1.ResourceRequirements, conds ...corev1.PodCondition) *corev1.Pod {
		p := base.DeepCopy()
		p.Status.ContainerStatuses[0].Resources = &r
		p.Status.Conditions = append(p.Status.Conditions, conds...)
		return p
	}
	cond := func(t corev1.PodConditionType, reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason}
	}
	for _, tc := range []struct {
		name                     string
		pod                      *corev1.Pod
		done, failed, infeasible bool
	}{
		{name: "status still has the old resources", pod: withStatus(old)},
		{name: "in progress", pod: withStatus(want, cond(corev1.PodResizeInProgress, ""))},
		{name: "deferred", pod: withStatus(old, cond(corev1.PodResizePending, corev1.PodReasonDeferred))},
		{name: "infeasible", pod: withStatus(old, cond(corev1.PodResizePending, corev1.PodReasonInfeasible)), failed: true, infeasible: true},
		{name: "new resources reported", pod: withStatus(want), done: true},
		{name: "new resources equal in another notation", pod: withStatus(resources("0.2", "134217728")), done: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.pod)
			if r.Done != tc.done || r.Failed != tc.failed || r.Infeasible != tc.infeasible {
				t.Errorf("Check = %+v, want done=%v failed=%v infeasible=%v", r, tc.done, tc.failed, tc.infeasible)
			}
		})
	}
}

func TestResizeStateKeepsAnImageUpdateInProgress(t *testing.T) {
	pod := podFrom(template())
	first, err := UpdatedPod(pod, imageUpdate("app", "nginx:1.26"), t0)
	if err != nil {
		t.Fatal(err)
	}
	second, err := UpdatedPod(first, resizeUpdate("log", resources("1", "1Gi")), t0)
	if err != nil {
		t.Fatal(err)
	}
	state, ok := ParseState(second)
	if !ok || state.Containers["app"].NewImage != "nginx:1.26" || len(state.Resize) != 1 {
		t.Errorf("state = %+v", state)
	}
}

func TestApplyReportsAResizeRefusedForCapacity(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		infeasible bool
	}{
		{"capacity", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web-0",
			errors.New("node didn't have enough allocatable resources: cpu, requested: 100000, allocatable: 64000")), true},
		{"authorization", apierrors.NewForbidden(schema.GroupResource{Resource: "pods/resize"}, "web-0",
			errors.New(`User "tapp" cannot patch resource "pods/resize"`)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := podFrom(template())
			s := newAPIServer(t, pod)
			s.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
				if action.GetSubresource() == "resize" {
					return true, nil, tc.err
				}
				return false, nil, nil
			})
			u := &Updater{Client: s}
			_, err := u.Apply(context.Background(), pod, resizeUpdate("app", resources("100", "1Gi")))
			if err == nil || errors.Is(err, ErrResizeInfeasible) != tc.infeasible {
				t.Errorf("err = %v, want infeasible %v", err, tc.infeasible)
			}
			if InProgress(s.stored(t, pod)) {
				t.Error("a refused resize was recorded")
			}
		})
	}
}
