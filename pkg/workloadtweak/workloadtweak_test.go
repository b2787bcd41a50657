package workloadtweak

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
)

func value(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }

func patch(op v1beta1.PatchOperation, path, raw string) v1beta1.Patch {
	p := v1beta1.Patch{Operation: op, Path: path}
	if raw != "" {
		p.Value = value(raw)
	}
	return p
}

func deployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "web-hangzhou-", Namespace: "default",
			Labels: map[string]string{"app": "web", openyurt.PoolNameLabel: "hangzhou", openyurt.YurtAppSetOwnerLabel: "web"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", openyurt.PoolNameLabel: "hangzhou"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", openyurt.PoolNameLabel: "hangzhou"}},
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
					Containers:     []corev1.Container{{Name: "nginx", Image: "nginx:1.19"}, {Name: "sidecar", Image: "envoy:1"}},
					NodeSelector:   map[string]string{openyurt.NodePoolLabel: "hangzhou"},
				},
			},
		},
	}
}

func TestSelects(t *testing.T) {
	for name, tc := range map[string]struct {
		tweak v1beta1.WorkloadTweak
		want  bool
	}{
		"named pool":                 {v1beta1.WorkloadTweak{Pools: []string{"beijing", "hangzhou"}}, true},
		"other pool":                 {v1beta1.WorkloadTweak{Pools: []string{"beijing"}}, false},
		"no pools and no selector":   {v1beta1.WorkloadTweak{}, false},
		"matching selector":          {v1beta1.WorkloadTweak{NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "east"}}}, true},
		"selector not matching":      {v1beta1.WorkloadTweak{NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "west"}}}, false},
		"empty selector: every pool": {v1beta1.WorkloadTweak{NodePoolSelector: &metav1.LabelSelector{}}, true},
		"union of pools and selector": {v1beta1.WorkloadTweak{Pools: []string{"beijing"},
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "east"}}}, true},
		"invalid selector selects nothing": {v1beta1.WorkloadTweak{NodePoolSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: "Bogus"}}}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Selects(&tc.tweak, "hangzhou", map[string]string{"zone": "east"}); got != tc.want {
				t.Errorf("Selects = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestForKeepsOrderAndCopies(t *testing.T) {
	tweaks := []v1beta1.WorkloadTweak{
		{Pools: []string{"hangzhou"}, Tweaks: v1beta1.Tweaks{Replicas: ptr.To[int32](1)}},
		{Pools: []string{"beijing"}, Tweaks: v1beta1.Tweaks{Replicas: ptr.To[int32](2)}},
		{NodePoolSelector: &metav1.LabelSelector{}, Tweaks: v1beta1.Tweaks{Replicas: ptr.To[int32](3)}},
	}
	got := For(tweaks, "hangzhou", nil)
	if len(got) != 2 || *got[0].Replicas != 1 || *got[1].Replicas != 3 {
		t.Fatalf("For = %+v, want the tweaks with replicas 1 then 3", got)
	}
	*got[0].Replicas = 9
	if *tweaks[0].Tweaks.Replicas != 1 {
		t.Errorf("For shares its result with its input: the input's replicas became %d", *tweaks[0].Tweaks.Replicas)
	}
}

func TestApplyToDeployment(t *testing.T) {
	for name, tc := range map[string]struct {
		tweaks []v1beta1.Tweaks
		want   func(d *appsv1.Deployment)
	}{
		"no tweaks: unchanged": {nil, func(*appsv1.Deployment) {}},
		"replicas": {
			[]v1beta1.Tweaks{{Replicas: ptr.To[int32](5)}},
			func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) },
		},
		"zero replicas": {
			[]v1beta1.Tweaks{{Replicas: ptr.To[int32](0)}},
			func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](0) },
		},
		"later replicas win": {
			[]v1beta1.Tweaks{{Replicas: ptr.To[int32](5)}, {Replicas: ptr.To[int32](7)}, {}},
			func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](7) },
		},
		"image of a container": {
			[]v1beta1.Tweaks{{ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.20"}}}},
			func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.20" },
		},
		"image of an init container": {
			[]v1beta1.Tweaks{{ContainerImages: []v1beta1.ContainerImage{{Name: "init", TargetImage: "busybox:2"}}}},
			func(d *appsv1.Deployment) { d.Spec.Template.Spec.InitContainers[0].Image = "busybox:2" },
		},
		"later image wins, other containers kept": {
			[]v1beta1.Tweaks{
				{ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.20"}, {Name: "sidecar", TargetImage: "envoy:2"}}},
				{ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.21"}}},
			},
			func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Image = "nginx:1.21"
				d.Spec.Template.Spec.Containers[1].Image = "envoy:2"
			},
		},
		"image naming no container changes nothing": {
			[]v1beta1.Tweaks{{ContainerImages: []v1beta1.ContainerImage{{Name: "absent", TargetImage: "x:1"}}}},
			func(*appsv1.Deployment) {},
		},
		"add a label": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/labels/tier", `"edge"`)}}},
			func(d *appsv1.Deployment) { d.Labels["tier"] = "edge" },
		},
		"add with the pool name placeholder": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/spec/template/spec/nodeSelector/region", `"{{nodepool-name}}-r"`)}}},
			func(d *appsv1.Deployment) { d.Spec.Template.Spec.NodeSelector["region"] = "hangzhou-r" },
		},
		"add an object where there was none": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/annotations", `{"a":"b"}`)}}},
			func(d *appsv1.Deployment) { d.Annotations = map[string]string{"a": "b"} },
		},
		"add inserts into a list at an index": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/spec/template/spec/containers/1", `{"name":"extra","image":"extra:1"}`)}}},
			func(d *appsv1.Deployment) {
				c := d.Spec.Template.Spec.Containers
				d.Spec.Template.Spec.Containers = []corev1.Container{c[0], {Name: "extra", Image: "extra:1"}, c[1]}
			},
		},
		"replace a scalar": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/spec/template/spec/containers/1/image", `"envoy:3"`)}}},
			func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[1].Image = "envoy:3" },
		},
		"replace a missing map key adds it, as OpenYurt's json-patch does": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/metadata/labels/tier", `"edge"`)}}},
			func(d *appsv1.Deployment) { d.Labels["tier"] = "edge" },
		},
		"remove a label is gone from the result": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationRemove, "/metadata/labels/app", "")}}},
			func(d *appsv1.Deployment) { delete(d.Labels, "app") },
		},
		"remove a list item": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationRemove, "/spec/template/spec/containers/1", "")}}},
			func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers = d.Spec.Template.Spec.Containers[:1] },
		},
		"remove with a value ignores it": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationRemove, "/spec/template/spec/initContainers", `"x"`)}}},
			func(d *appsv1.Deployment) { d.Spec.Template.Spec.InitContainers = nil },
		},
		"key with an escaped slash": {
			[]v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/annotations", `{}`),
				patch(v1beta1.PatchOperationAdd, "/metadata/annotations/example.com~1owner", `"team-a"`)}}},
			func(d *appsv1.Deployment) { d.Annotations = map[string]string{"example.com/owner": "team-a"} },
		},
		"patches run after replicas and images of every tweak, in order": {
			[]v1beta1.Tweaks{
				{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/spec/replicas", `4`)}},
				{Replicas: ptr.To[int32](9), ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:2"}}},
				{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/spec/template/spec/containers/0/image", `"nginx:3"`)}},
			},
			func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](4)
				d.Spec.Template.Spec.Containers[0].Image = "nginx:3"
			},
		},
		"a later patch sees an earlier one": {
			[]v1beta1.Tweaks{
				{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/annotations", `{"a":"1"}`)}},
				{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/metadata/annotations/a", `"2"`)}},
			},
			func(d *appsv1.Deployment) { d.Annotations = map[string]string{"a": "2"} },
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, want := deployment(), deployment()
			tc.want(want)
			if err := ApplyToDeployment(got, "hangzhou", tc.tweaks); err != nil {
				t.Fatalf("ApplyToDeployment: %v", err)
			}
			if !apiequality.Semantic.DeepEqual(got, want) {
				t.Errorf("unexpected result (-want +got):\n%s", diff.Diff(want, got))
			}
		})
	}
}

func TestApplyAppendsToAList(t *testing.T) {
	d := deployment()
	d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	tweaks := []v1beta1.Tweaks{{Patches: []v1beta1.Patch{
		patch(v1beta1.PatchOperationAdd, "/spec/template/spec/containers/0/env/-", `{"name":"POOL","value":"{{nodepool-name}}"}`),
	}}}
	if err := ApplyToDeployment(d, "hangzhou", tweaks); err != nil {
		t.Fatal(err)
	}
	want := []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "POOL", Value: "hangzhou"}}
	if got := d.Spec.Template.Spec.Containers[0].Env; !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("env = %+v, want %+v", got, want)
	}
}

func TestApplyToStatefulSet(t *testing.T) {
	s := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{openyurt.PoolNameLabel: "p"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: "db",
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
				Containers:     []corev1.Container{{Name: "db", Image: "mysql:8"}},
			}},
		},
	}
	tweaks := []v1beta1.Tweaks{{
		Replicas:        ptr.To[int32](3),
		ContainerImages: []v1beta1.ContainerImage{{Name: "db", TargetImage: "mysql:9"}, {Name: "init", TargetImage: "busybox:2"}},
		Patches:         []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/spec/serviceName", `"db-{{nodepool-name}}"`)},
	}}
	if err := ApplyToStatefulSet(s, "p", tweaks); err != nil {
		t.Fatal(err)
	}
	if *s.Spec.Replicas != 3 || s.Spec.Template.Spec.Containers[0].Image != "mysql:9" ||
		s.Spec.Template.Spec.InitContainers[0].Image != "busybox:2" || s.Spec.ServiceName != "db-p" {
		t.Errorf("unexpected StatefulSet: replicas %d, image %s, init image %s, serviceName %s", *s.Spec.Replicas,
			s.Spec.Template.Spec.Containers[0].Image, s.Spec.Template.Spec.InitContainers[0].Image, s.Spec.ServiceName)
	}
	bad := []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationRemove, "/spec/volumeClaimTemplates/0", "")}}}
	before := s.DeepCopy()
	if err := ApplyToStatefulSet(s, "p", bad); err == nil {
		t.Error("removing a claim template the StatefulSet lacks: no error")
	}
	if !apiequality.Semantic.DeepEqual(s, before) {
		t.Error("a failed apply changed the StatefulSet")
	}
}

// A patch that removes identity labels, as OpenYurt's example replaces metadata.labels, keeps them.
func TestApplyKeepsRemovedIdentityLabels(t *testing.T) {
	d := deployment()
	want := map[string]string{"foo": "bar"}
	for _, key := range IdentityLabels {
		if v, ok := d.Labels[key]; ok {
			want[key] = v
		}
	}
	if len(want) == 1 {
		t.Fatal("the test Deployment has no identity label")
	}
	podLabels := d.Spec.Template.Labels
	err := ApplyToDeployment(d, "hangzhou", []v1beta1.Tweaks{{Patches: []v1beta1.Patch{
		patch(v1beta1.PatchOperationAdd, "/metadata/labels", `{"foo":"bar"}`),
		patch(v1beta1.PatchOperationRemove, "/spec/template/metadata/labels/apps.openyurt.io~1pool-name", ""),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(d.Labels, want) {
		t.Errorf("labels = %v, want %v", d.Labels, want)
	}
	if !apiequality.Semantic.DeepEqual(d.Spec.Template.Labels, podLabels) {
		t.Errorf("pod labels = %v, want %v", d.Spec.Template.Labels, podLabels)
	}
}

func TestApplyErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		tweaks    []v1beta1.Tweaks
		wantTweak int
		wantPatch int
		wantText  string
		identity  bool
	}{
		"add under a missing parent": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/spec/template/spec/containers/0/env/-", `{"name":"A"}`)}}},
			wantText: "missing path",
		},
		"remove a missing key": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationRemove, "/metadata/labels/absent", "")}}},
			wantText: "nonexistent key",
		},
		"remove past the end of a list": {
			tweaks:    []v1beta1.Tweaks{{}, {Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/labels/a", `"b"`), patch(v1beta1.PatchOperationRemove, "/spec/template/spec/containers/5", "")}}},
			wantTweak: 1, wantPatch: 1, wantText: "invalid index",
		},
		"replace a missing list index": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/spec/template/spec/containers/7/image", `"x"`)}}},
			wantText: "missing path",
		},
		"index into a map with a word": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/spec/template/spec/containers/first/image", `"x"`)}}},
			wantText: "missing path",
		},
		"path without a leading slash": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "metadata/labels/a", `"b"`)}}},
			wantText: "must start with '/'",
		},
		"empty path": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "", `{}`)}}},
			wantText: "must start with '/'",
		},
		"unsupported operation": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch("move", "/metadata/labels/a", "")}}},
			wantText: "unsupported operation",
		},
		"add without a value": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/labels/a", "")}}},
			wantText: "needs a value",
		},
		"value of the wrong type": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/spec/replicas", `"three"`)}}},
			wantText: "does not decode",
		},
		"field the kind does not have": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/spec/serviceName", `"db"`)}}},
			wantText: "unknown field",
		},
		"change the kind": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/kind", `"StatefulSet"`)}}},
			identity: true, wantText: "apiVersion and kind",
		},
		"change the namespace": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/namespace", `"other"`)}}},
			identity: true, wantText: "metadata.namespace",
		},
		"change the pod template's pool label": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationReplace, "/spec/template/metadata/labels/apps.openyurt.io~1pool-name", `"x"`)}}},
			identity: true, wantText: "spec.template.metadata.labels",
		},
		"change the selector": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/spec/selector/matchLabels/x", `"y"`)}}},
			identity: true, wantText: "spec.selector",
		},
		"the patch that breaks decoding is named, not the first": {
			tweaks: []v1beta1.Tweaks{
				{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/metadata/labels/a", `"b"`)}},
				{Replicas: ptr.To[int32](1)},
				{Patches: []v1beta1.Patch{
					patch(v1beta1.PatchOperationAdd, "/metadata/labels/c", `"d"`),
					patch(v1beta1.PatchOperationAdd, "/spec/bogus", `1`),
					patch(v1beta1.PatchOperationAdd, "/metadata/labels/e", `"f"`),
				}},
			},
			wantTweak: 2, wantPatch: 1, wantText: "unknown field",
		},
		"the first of several offending patches is named": {
			tweaks: []v1beta1.Tweaks{{Patches: []v1beta1.Patch{
				patch(v1beta1.PatchOperationReplace, "/metadata/labels/apps.openyurt.io~1pool-name", `"x"`),
				patch(v1beta1.PatchOperationAdd, "/spec/bogus", `1`),
			}}},
			wantPatch: 0, identity: true, wantText: "label apps.openyurt.io/pool-name of metadata.labels",
		},
		"set status": {
			tweaks:   []v1beta1.Tweaks{{Patches: []v1beta1.Patch{patch(v1beta1.PatchOperationAdd, "/status/replicas", `3`)}}},
			identity: true, wantText: "status",
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := deployment()
			before := d.DeepCopy()
			err := ApplyToDeployment(d, "hangzhou", tc.tweaks)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not say %q", err, tc.wantText)
			}
			var pe *PatchError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PatchError", err)
			}
			if pe.Tweak != tc.wantTweak || pe.Patch != tc.wantPatch {
				t.Errorf("error names tweak %d patch %d, want %d %d", pe.Tweak, pe.Patch, tc.wantTweak, tc.wantPatch)
			}
			if errors.Is(err, ErrIdentityChanged) != tc.identity {
				t.Errorf("errors.Is(err, ErrIdentityChanged) = %v, want %v", !tc.identity, tc.identity)
			}
			if !apiequality.Semantic.DeepEqual(d, before) {
				t.Error("a failed apply changed the Deployment")
			}
		})
	}
}

// BenchmarkApplyToDeployment applies one replicas, one image and three patches to a Deployment, as the
// controller does per pool.
func BenchmarkApplyToDeployment(b *testing.B) {
	tweaks := []v1beta1.Tweaks{
		{Replicas: ptr.To[int32](3), ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.20"}}},
		{Patches: []v1beta1.Patch{
			patch(v1beta1.PatchOperationAdd, "/metadata/labels/tier", `"edge"`),
			patch(v1beta1.PatchOperationAdd, "/spec/template/spec/nodeSelector/region", `"{{nodepool-name}}"`),
			patch(v1beta1.PatchOperationReplace, "/spec/template/spec/containers/1/image", `"envoy:2"`),
		}},
	}
	base := deployment()
	b.ReportAllocs()
	for b.Loop() {
		d := base.DeepCopy()
		if err := ApplyToDeployment(d, "hangzhou", tweaks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyToDeploymentNoPatches is the common case: replicas and images only, no JSON round trip.
func BenchmarkApplyToDeploymentNoPatches(b *testing.B) {
	tweaks := []v1beta1.Tweaks{{Replicas: ptr.To[int32](3), ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.20"}}}}
	base := deployment()
	b.ReportAllocs()
	for b.Loop() {
		d := base.DeepCopy()
		if err := ApplyToDeployment(d, "hangzhou", tweaks); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBlameIsBounded(t *testing.T) {
	var patches []v1beta1.Patch
	for i := 0; i <= maxBlamedPatches; i++ {
		patches = append(patches, patch(v1beta1.PatchOperationAdd, "/metadata/labels/l", `"v"`))
	}
	patches = append(patches, patch(v1beta1.PatchOperationAdd, "/spec/bogus", `1`))
	err := ApplyToDeployment(deployment(), "hangzhou", []v1beta1.Tweaks{{Patches: patches}})
	var pe *PatchError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("error = %v, want the whole-object error without a patch named", err)
	}
}
