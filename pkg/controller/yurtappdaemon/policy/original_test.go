package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// originalRevision is a revision label value in the original's form (<yad>-<its own hash>).
const originalRevision = "web-7c9f5d8b6"

// withServerDefaults fills what kube-apiserver defaults in a Deployment's pod template.
func withServerDefaults(t *corev1.PodTemplateSpec) {
	s := &t.Spec
	s.RestartPolicy = corev1.RestartPolicyAlways
	s.DNSPolicy = corev1.DNSClusterFirst
	s.SchedulerName = corev1.DefaultSchedulerName
	s.TerminationGracePeriodSeconds = ptr.To[int64](30)
	s.SecurityContext = &corev1.PodSecurityContext{}
	for i := range s.Containers {
		c := &s.Containers[i]
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
		c.ImagePullPolicy = corev1.PullIfNotPresent
	}
}

// originalDeployment is the Deployment of pool p as yurt-app-manager (or yurt-manager up to v1.6) renders
// it for yad and kube-apiserver stores it, adopted by yad (controller reference) as after a migration:
// generated name, the template's and the selector's labels plus pool-name and the original's revision,
// the ref-nodepool annotation, the pool pinning replacing the template's nodeSelector, the required node
// affinity removed, an Exists toleration per pool taint.
func originalDeployment(yad *v1alpha1.YurtAppDaemon, p *v1alpha1.NodePool) *appsv1.Deployment {
	t := yad.Spec.WorkloadTemplate.DeploymentTemplate
	labels := map[string]string{PoolNameLabel: p.Name, RevisionHashLabel: originalRevision}
	for k, v := range t.Labels {
		labels[k] = v
	}
	for k, v := range yad.Spec.Selector.MatchLabels {
		labels[k] = v
	}
	annotations := map[string]string{RefNodePoolAnnotation: p.Name}
	for k, v := range t.Annotations {
		annotations[k] = v
	}
	spec := t.Spec.DeepCopy()
	spec.Selector.MatchLabels[PoolNameLabel] = p.Name
	tmpl := &spec.Template
	tmpl.Labels[PoolNameLabel] = p.Name
	tmpl.Labels[RevisionHashLabel] = originalRevision
	tmpl.Spec.NodeSelector = map[string]string{NodePoolLabel: p.Name}
	if a := tmpl.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
	}
	for _, taint := range p.Spec.Taints {
		tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, corev1.Toleration{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: taint.Effect})
	}
	withServerDefaults(tmpl)
	name := yad.Name + "-" + p.Name + "-x7k2p"
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: yad.Namespace, UID: types.UID("uid-" + name), ResourceVersion: "3",
			Generation: 1, CreationTimestamp: metav1.NewTime(testNow.Add(-time.Hour)), Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(yad, ControllerKind)}},
		Spec:   *spec,
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2},
	}
}

// applyUpdate is the Deployment as the API server holds it after the plan's update.
func applyUpdate(t *testing.T, plan *Plan) *appsv1.Deployment {
	t.Helper()
	if len(plan.Updates) != 1 || plan.Updates[0].Deployment == nil {
		t.Fatalf("want one Deployment update, got %v", summarize(plan).updates)
	}
	d := plan.Updates[0].Deployment.DeepCopy()
	d.Generation++
	d.Status.ObservedGeneration = d.Generation
	return d
}

func TestAdoptedOriginalRendering(t *testing.T) {
	hangzhou := edge("hangzhou", taint("edge.example.com/isolated", "true", corev1.TaintEffectNoSchedule))
	type check func(t *testing.T, live *appsv1.Deployment, plan *Plan)
	keepsPods := func(t *testing.T, live *appsv1.Deployment, plan *Plan) {
		t.Helper()
		got := plan.Updates[0].Deployment
		if !equality.Semantic.DeepEqual(got.Spec.Template, live.Spec.Template) {
			t.Errorf("the pod template is rewritten:\n got %+v\nwant %+v", got.Spec.Template, live.Spec.Template)
		}
	}
	rolls := func(t *testing.T, live *appsv1.Deployment, plan *Plan) {
		t.Helper()
		got := plan.Updates[0].Deployment
		if got.Spec.Template.Labels[RevisionHashLabel] != plan.Revision {
			t.Errorf("the pod template carries revision %q, want the rendered %q", got.Spec.Template.Labels[RevisionHashLabel], plan.Revision)
		}
		if _, ok := got.Annotations[AdoptedTemplateAnnotation]; ok {
			t.Errorf("a re-rendered child keeps %s", AdoptedTemplateAnnotation)
		}
	}
	recorded := func(t *testing.T, live *appsv1.Deployment, plan *Plan) {
		t.Helper()
		keepsPods(t, live, plan)
		got := plan.Updates[0].Deployment
		if got.Labels[RevisionHashLabel] != plan.Revision || got.Annotations[AdoptedTemplateAnnotation] != plan.Revision {
			t.Errorf("labels %v annotations %v: want the revision %s recorded", got.Labels, got.Annotations, plan.Revision)
		}
		if got.Annotations[PlacementHashAnnotation] != PlacementHash(hangzhou) {
			t.Errorf("placement hash %q, want %q", got.Annotations[PlacementHashAnnotation], PlacementHash(hangzhou))
		}
		if got.UID != live.UID || got.ResourceVersion != live.ResourceVersion {
			t.Errorf("the update is not bound to the live object")
		}
	}

	cases := []struct {
		name string
		// yad is the YurtAppDaemon the original rendered from; live is its rendering (may be edited).
		yad  func() *v1alpha1.YurtAppDaemon
		live func(d *appsv1.Deployment)
		// now is the YurtAppDaemon at the sync (nil: yad unchanged).
		now    func(y *v1alpha1.YurtAppDaemon)
		pool   *v1alpha1.NodePool
		update string
		check  check
	}{
		{name: "the original's rendering of the current template is recorded, not rendered again",
			yad: newYAD, update: "RevisionRecorded", check: recorded},
		{name: "the template's nodeSelector and required affinity, which the original dropped, do not make a difference",
			yad: func() *v1alpha1.YurtAppDaemon {
				y := newYAD()
				s := &y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec
				s.NodeSelector = map[string]string{"disk": "ssd"}
				s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}}}},
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
				return y
			}, update: "RevisionRecorded", check: recorded},
		{name: "a template toleration and the pool's Exists toleration",
			yad: func() *v1alpha1.YurtAppDaemon {
				y := newYAD()
				y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Tolerations = []corev1.Toleration{
					{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
				return y
			}, update: "RevisionRecorded", check: recorded},
		{name: "kubectl rollout restart's annotation is kept",
			yad: newYAD, live: func(d *appsv1.Deployment) {
				d.Spec.Template.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": "2024-01-01T00:00:00Z"}
			}, update: "RevisionRecorded", check: recorded},
		{name: "only the Deployment's fields changed since the original rendered it: recorded",
			yad: newYAD, now: func(y *v1alpha1.YurtAppDaemon) { y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.MinReadySeconds = 5 },
			update: "RevisionRecorded", check: func(t *testing.T, live *appsv1.Deployment, plan *Plan) {
				recorded(t, live, plan)
				if plan.Updates[0].Deployment.Spec.MinReadySeconds != 5 {
					t.Errorf("minReadySeconds not updated")
				}
			}},
		{name: "the template changed since: rendered again",
			yad: newYAD, now: func(y *v1alpha1.YurtAppDaemon) { withImage(y, "nginx:1.26") },
			update: "RevisionChanged,PlacementChanged", check: rolls},
		{name: "an image edited by hand: rendered again",
			yad: newYAD, live: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.24" },
			update: "RevisionChanged,PlacementChanged", check: rolls},
		{name: "an extra container: rendered again",
			yad: newYAD, live: func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
			}, update: "RevisionChanged,PlacementChanged", check: rolls},
		{name: "a pod label the template lacks: rendered again",
			yad: newYAD, live: func(d *appsv1.Deployment) { d.Spec.Template.Labels["extra"] = "x" },
			update: "RevisionChanged,PlacementChanged", check: rolls},
		{name: "a taint added to the pool since (the toleration is missing): rendered again",
			yad: newYAD, pool: edge("hangzhou"), update: "RevisionChanged,PlacementChanged", check: rolls},
		{name: "our own rendering of an older revision whose pod template the original would render now",
			yad: newYAD, live: func(d *appsv1.Deployment) {
				d.Spec.Template.Labels[RevisionHashLabel] = "web-0123456789"
			}, update: "RevisionRecorded", check: recorded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rendered := hangzhou
			if tc.pool != nil {
				rendered = tc.pool
			}
			live := originalDeployment(tc.yad(), rendered)
			if tc.live != nil {
				tc.live(live)
			}
			yad := tc.yad()
			if tc.now != nil {
				tc.now(yad)
			}
			plan, err := ComputePlan(yad, []*v1alpha1.NodePool{hangzhou}, []*appsv1.Deployment{live}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(plan)
			if want := []string{live.Name + ":" + tc.update}; !reflect.DeepEqual(got.updates, want) {
				t.Fatalf("updates %v, want %v", got.updates, want)
			}
			if len(got.creates) != 0 || len(got.deletes) != 0 {
				t.Errorf("creates %v deletes %v", got.creates, got.deletes)
			}
			tc.check(t, live, plan)
		})
	}
}

// TestAdoptedOriginalRenderingLifecycle follows one adopted child through its syncs: recorded once, then
// current (no update), then scaled with its pod template kept, then re-rendered when the template changes.
func TestAdoptedOriginalRenderingLifecycle(t *testing.T) {
	hangzhou := edge("hangzhou", taint("edge.example.com/isolated", "", corev1.TaintEffectNoExecute))
	pools := []*v1alpha1.NodePool{hangzhou}
	yad := newYAD()
	original := originalDeployment(yad, hangzhou)

	plan, err := ComputePlan(yad, pools, []*appsv1.Deployment{original}, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := applyUpdate(t, plan)
	if plan.Status.Conditions[1].Status == corev1.ConditionTrue {
		t.Errorf("a child being recorded is reported updated: %+v", plan.Status.Conditions[1])
	}

	plan, err = ComputePlan(yad, pools, []*appsv1.Deployment{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(plan); len(got.updates) != 0 || got.updated != updatedOK {
		t.Fatalf("after the record: updates %v, %s; want none, %s", got.updates, got.updated, updatedOK)
	}

	yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](3)
	plan, err = ComputePlan(yad, pools, []*appsv1.Deployment{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(plan).updates; !reflect.DeepEqual(got, []string{live.Name + ":ReplicasChanged"}) {
		t.Fatalf("scaling: updates %v", got)
	}
	scaled := applyUpdate(t, plan)
	if *scaled.Spec.Replicas != 3 || !equality.Semantic.DeepEqual(scaled.Spec.Template, original.Spec.Template) {
		t.Errorf("scaling: replicas %d, pod template kept %v", *scaled.Spec.Replicas,
			equality.Semantic.DeepEqual(scaled.Spec.Template, original.Spec.Template))
	}
	if scaled.Annotations[AdoptedTemplateAnnotation] != plan.Revision {
		t.Errorf("scaling dropped the record: %v", scaled.Annotations)
	}

	withImage(yad, "nginx:1.26")
	plan, err = ComputePlan(yad, pools, []*appsv1.Deployment{scaled}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rolled := applyUpdate(t, plan)
	if rolled.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" || rolled.Spec.Template.Labels[RevisionHashLabel] != plan.Revision {
		t.Errorf("the template change is not rendered: %+v", rolled.Spec.Template)
	}
	if _, ok := rolled.Annotations[AdoptedTemplateAnnotation]; ok {
		t.Errorf("the re-rendered child keeps %s", AdoptedTemplateAnnotation)
	}
	plan, err = ComputePlan(yad, pools, []*appsv1.Deployment{rolled}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(plan).updates; len(got) != 0 {
		t.Errorf("after the re-render: updates %v", got)
	}
}

func TestAdoptedOriginalRenderingStatefulSet(t *testing.T) {
	hangzhou := edge("hangzhou")
	yad := toStatefulSet(newYAD())
	d := originalDeployment(newYAD(), hangzhou)
	s := &appsv1.StatefulSet{ObjectMeta: d.ObjectMeta, Spec: appsv1.StatefulSetSpec{
		Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, ServiceName: "web", Template: d.Spec.Template}}
	plan, err := ComputePlan(yad, []*v1alpha1.NodePool{hangzhou}, nil, []*appsv1.StatefulSet{s})
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(plan).updates; !reflect.DeepEqual(got, []string{s.Name + ":RevisionRecorded"}) {
		t.Fatalf("updates %v", got)
	}
	if got := plan.Updates[0].StatefulSet; got == nil || !equality.Semantic.DeepEqual(got.Spec.Template, s.Spec.Template) {
		t.Errorf("the StatefulSet's pod template is rewritten")
	}
}

func TestRunsOriginalRendering(t *testing.T) {
	p := edge("hangzhou", taint("k", "v", corev1.TaintEffectNoSchedule))
	want, err := OriginalPodTemplate(newYAD(), p)
	if err != nil {
		t.Fatal(err)
	}
	base := originalDeployment(newYAD(), p).Spec.Template
	cases := []struct {
		name   string
		edit   func(want, have *corev1.PodTemplateSpec)
		reason string // "" when it runs the rendering
	}{
		{"as rendered, with the server's defaults", func(_, _ *corev1.PodTemplateSpec) {}, ""},
		{"another revision label value", func(_, t *corev1.PodTemplateSpec) { t.Labels[RevisionHashLabel] = "x" }, ""},
		{"no pool label", func(_, t *corev1.PodTemplateSpec) { delete(t.Labels, PoolNameLabel) }, "metadata.labels"},
		{"another nodeSelector", func(_, t *corev1.PodTemplateSpec) { t.Spec.NodeSelector["disk"] = "ssd" }, "spec.nodeSelector"},
		{"our toleration form (Equal with the value)", func(_, t *corev1.PodTemplateSpec) {
			t.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}}
		}, "spec.tolerations"},
		{"an affinity", func(_, t *corev1.PodTemplateSpec) { t.Spec.Affinity = &corev1.Affinity{} }, "spec.affinity"},
		{"a volume more", func(_, t *corev1.PodTemplateSpec) { t.Spec.Volumes = []corev1.Volume{{Name: "v"}} }, "spec.volumes"},
		{"an env var more in the template's container", func(w, _ *corev1.PodTemplateSpec) {
			w.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
		}, "spec.containers[main].env"},
		{"another image", func(_, t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "nginx:1.24" }, "images"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := want.DeepCopy()
			have := base.DeepCopy()
			tc.edit(w, have)
			ok, reason := RunsOriginalRendering(w, have)
			if ok != (tc.reason == "") || !strings.Contains(reason, tc.reason) {
				t.Errorf("RunsOriginalRendering = %v, %q; want reason containing %q", ok, reason, tc.reason)
			}
		})
	}
}
