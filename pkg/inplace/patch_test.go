package inplace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func imagesOf(pod *corev1.Pod) map[string]string {
	m := map[string]string{}
	for _, c := range pod.Spec.Containers {
		m[c.Name] = c.Image
	}
	for _, c := range pod.Spec.InitContainers {
		m["init:"+c.Name] = c.Image
	}
	return m
}

func TestUpdatedPod(t *testing.T) {
	pod := podFrom(template())
	pristine := pod.DeepCopy()
	u := Update{
		Revision:          "h2",
		Images:            map[string]string{"log": "fluentbit:3"},
		Labels:            map[string]string{"app": "web", "new": "1", "tapp_template_hash_key": "h2"},
		RemoveLabels:      []string{"tier", "absent"},
		Annotations:       map[string]string{"team": "b"},
		RemoveAnnotations: []string{"note"},
	}
	uJSON, _ := json.Marshal(u)

	got, err := UpdatedPod(pod, u, t0)
	if err != nil {
		t.Fatal(err)
	}

	if after, _ := json.Marshal(u); !reflect.DeepEqual(pod, pristine) || string(after) != string(uJSON) {
		t.Fatal("inputs were modified")
	}
	wantImages := map[string]string{"app": "nginx:1.25", "log": "fluentbit:3", "istio-proxy": "proxy:1", "init:setup": "busybox:1"}
	if im := imagesOf(got); !reflect.DeepEqual(im, wantImages) {
		t.Errorf("images = %v, want %v", im, wantImages)
	}
	wantLabels := map[string]string{"app": "web", "new": "1", "foreign": "keep", "tapp_instance_key": "0", "tapp_template_hash_key": "h2"}
	if !reflect.DeepEqual(got.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", got.Labels, wantLabels)
	}
	ann := got.DeepCopy().Annotations
	delete(ann, StateAnnotation)
	wantAnn := map[string]string{"team": "b", "foreign": "keep", "tkestack.io/portmapping": "pod-value"}
	if !reflect.DeepEqual(ann, wantAnn) {
		t.Errorf("annotations = %v, want %v", ann, wantAnn)
	}

	state, ok := ParseState(got)
	if !ok {
		t.Fatalf("no state recorded: %q", got.Annotations[StateAnnotation])
	}
	wantState := &State{
		Revision:   "h2",
		StartTime:  metav1.NewTime(t0),
		Generation: 1,
		Containers: map[string]ContainerState{"log": {
			OldImage: "fluentbit:2", NewImage: "fluentbit:3",
			OldImageID: "sha256:log", OldContainerID: "containerd://c-log-1", OldRestartCount: 2,
		}},
	}
	if !equality.Semantic.DeepEqual(state, wantState) {
		t.Errorf("state = %+v, want %+v", state, wantState)
	}

	// Nothing else changed.
	rest := got.DeepCopy()
	rest.Labels, rest.Annotations = pod.Labels, pod.Annotations
	rest.Spec.Containers[1].Image = "fluentbit:2"
	if !equality.Semantic.DeepEqual(rest, pod) {
		t.Error("UpdatedPod changed more than images, labels and annotations")
	}
}

func TestUpdatedPodMetadataOnly(t *testing.T) {
	pod := podFrom(template())
	u := Update{Labels: map[string]string{"tier": "back"}, Images: map[string]string{"app": "nginx:1.25"}} // the image it runs
	got, err := UpdatedPod(pod, u, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, found := got.Annotations[StateAnnotation]; found {
		t.Error("a metadata-only change must not write the state annotation")
	}
	if got.Labels["tier"] != "back" {
		t.Errorf("tier = %q, want back", got.Labels["tier"])
	}

	// An update in progress keeps its state untouched.
	inflight := pod.DeepCopy()
	inflight.Annotations[StateAnnotation] = `{"revision":"h1","containers":{"app":{"newImage":"nginx:1.25","oldImageID":"sha256:old"}}}`
	got, err = UpdatedPod(inflight, u, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations[StateAnnotation] != inflight.Annotations[StateAnnotation] {
		t.Errorf("state changed to %q", got.Annotations[StateAnnotation])
	}
}

func TestUpdatedPodMergesStateInProgress(t *testing.T) {
	pod := podFrom(withImage(template(), "app", "nginx:1.26"))
	pod.Annotations[StateAnnotation] = `{"revision":"h1","containers":{"app":{"oldImage":"nginx:1.25","newImage":"nginx:1.26","oldImageID":"sha256:aaa","oldContainerID":"containerd://c-app-1","oldRestartCount":0}}}`
	u := imageUpdate("app", "nginx:1.26", "log", "fluentbit:3")
	u.Revision = "h3"
	got, err := UpdatedPod(pod, u, t0)
	if err != nil {
		t.Fatal(err)
	}
	state, ok := ParseState(got)
	if !ok {
		t.Fatal("no state")
	}
	if len(state.Containers) != 2 || state.Containers["app"].OldImageID != "sha256:aaa" || state.Containers["log"].NewImage != "fluentbit:3" {
		t.Errorf("state containers = %+v, want app kept and log added", state.Containers)
	}
	if state.Revision != "h3" {
		t.Errorf("revision = %q, want h3", state.Revision)
	}
}

func TestUpdatedPodReplacesLegacyState(t *testing.T) {
	pod := podFrom(template())
	pod.Annotations[StateAnnotation] = "true"
	if InProgress(pod) {
		t.Fatal(`legacy "true" must read as no state`)
	}
	got, err := UpdatedPod(pod, imageUpdate("app", "nginx:1.26"), t0)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := ParseState(got); !ok || len(s.Containers) != 1 {
		t.Errorf("state = %q, want a JSON state for app", got.Annotations[StateAnnotation])
	}
}

func TestUpdatedPodRefusesTheStateAnnotation(t *testing.T) {
	pod := podFrom(template())
	for _, u := range []Update{
		{Annotations: map[string]string{StateAnnotation: "x"}},
		{RemoveAnnotations: []string{StateAnnotation}},
	} {
		if got, err := UpdatedPod(pod, u, t0); err == nil {
			t.Errorf("UpdatedPod(%+v) = %v, want an error", u, got.Annotations)
		}
	}
}

func TestUpdatedPodMissingContainer(t *testing.T) {
	pod := podFrom(template())
	pod.Spec.Containers = pod.Spec.Containers[:1] // no "log"
	if _, err := UpdatedPod(pod, imageUpdate("log", "fluentbit:3"), t0); err == nil {
		t.Fatal("want an error for a container the pod does not have")
	}
}

func TestSpecPatch(t *testing.T) {
	pod := podFrom(template())
	u := imageUpdate("log", "fluentbit:3", "app", "nginx:1.26")
	u.Labels = map[string]string{"app": "web", "tapp_template_hash_key": "h2"}
	u.RemoveLabels, u.RemoveAnnotations = []string{"tier"}, []string{"note"}
	updated, err := UpdatedPod(pod, u, t0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := SpecPatch(pod, updated)
	if err != nil {
		t.Fatal(err)
	}

	var decoded struct {
		Metadata struct {
			UID             string             `json:"uid"`
			ResourceVersion string             `json:"resourceVersion"`
			Labels          map[string]*string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Containers []map[string]string `json:"containers"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded.Metadata.UID != "uid-1" || decoded.Metadata.ResourceVersion != "" {
		t.Errorf("uid, resourceVersion in the patch = %q, %q; want uid-1 and none", decoded.Metadata.UID, decoded.Metadata.ResourceVersion)
	}
	if v, ok := decoded.Metadata.Labels["tier"]; !ok || v != nil {
		t.Errorf("removed label must be sent as null: %s", data)
	}
	wantContainers := []map[string]string{{"name": "app", "image": "nginx:1.26"}, {"name": "log", "image": "fluentbit:3"}}
	if !reflect.DeepEqual(decoded.Spec.Containers, wantContainers) {
		t.Errorf("containers = %v, want %v", decoded.Spec.Containers, wantContainers)
	}
	if strings.Contains(string(data), "istio-proxy") || strings.Contains(string(data), "initContainers") {
		t.Errorf("patch touches containers it should not: %s", data)
	}

	// Applying the patch the way the API server does gives exactly the updated pod.
	oldJSON, _ := json.Marshal(pod)
	merged, err := strategicpatch.StrategicMergePatch(oldJSON, data, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var result corev1.Pod
	if err := json.Unmarshal(merged, &result); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(&result, updated) {
		t.Errorf("patched pod differs from the updated pod:\n got %+v\nwant %+v", result.ObjectMeta, updated.ObjectMeta)
	}
}

func TestSpecPatchRefusesOtherChanges(t *testing.T) {
	pod := podFrom(template())
	changed := pod.DeepCopy()
	changed.Spec.Containers[0].Env = nil
	if _, err := SpecPatch(pod, changed); err == nil {
		t.Error("want an error for a change other than images, labels, annotations")
	}
	changed = pod.DeepCopy()
	changed.Spec.InitContainers[0].Image = "busybox:2"
	if _, err := SpecPatch(pod, changed); err == nil {
		t.Error("want an error for an init container image change")
	}
	noUID := pod.DeepCopy()
	noUID.UID = ""
	if _, err := SpecPatch(noUID, noUID.DeepCopy()); err == nil {
		t.Error("want an error without a UID precondition")
	}
}
