package policy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// soft is the default constraint over key counting the pods of newTApp's selector.
func soft(key string) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
}

// TestNewPodSpread: the pods the plan creates are spread over nodes (and zones, when nodes have them) by
// soft constraints over spec.selector, unless the template has constraints of its own or spec.spreadPolicy
// is None; the constraints never change the template hashes.
func TestNewPodSpread(t *testing.T) {
	own := []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "rack", WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	for _, c := range []struct {
		name   string
		mutate func(*tkestackv1.TApp)
		topo   Topology
		want   []corev1.TopologySpreadConstraint
	}{
		{"unset policy: spread over nodes", nil, Topology{}, []corev1.TopologySpreadConstraint{soft(corev1.LabelHostname)}},
		{"unset policy, nodes with zones: over nodes and zones", nil, Topology{Zones: true},
			[]corev1.TopologySpreadConstraint{soft(corev1.LabelHostname), soft(corev1.LabelTopologyZone)}},
		{"Spread", func(tapp *tkestackv1.TApp) { tapp.Spec.SpreadPolicy = tkestackv1.SpreadPolicySpread }, Topology{Zones: true},
			[]corev1.TopologySpreadConstraint{soft(corev1.LabelHostname), soft(corev1.LabelTopologyZone)}},
		{"None: no constraint", func(tapp *tkestackv1.TApp) { tapp.Spec.SpreadPolicy = tkestackv1.SpreadPolicyNone }, Topology{Zones: true}, nil},
		{"the template's own constraints are kept as they are", func(tapp *tkestackv1.TApp) {
			tapp.Spec.Template.Spec.TopologySpreadConstraints = own
		}, Topology{Zones: true}, own},
		{"the selector's expressions are counted too", func(tapp *tkestackv1.TApp) {
			tapp.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}
		}, Topology{}, []corev1.TopologySpreadConstraint{func() corev1.TopologySpreadConstraint {
			c := soft(corev1.LabelHostname)
			c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}
			return c
		}()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tapp := newTApp(1)
			if c.mutate != nil {
				c.mutate(tapp)
			}
			before := tapp.DeepCopy()
			plan := ComputePlan(tapp, nil, nil, testNow)
			plan.Topology = c.topo
			pod, err := plan.NewPod("0")
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(pod.Spec.TopologySpreadConstraints, c.want) {
				t.Errorf("constraints %+v\nwant        %+v", pod.Spec.TopologySpreadConstraints, c.want)
			}
			if got, want := pod.Labels[tkestack.TemplateHashLabel], tapppod.TemplateHash(&tapp.Spec.Template); got != want {
				t.Errorf("template hash %s, want the template's %s", got, want)
			}
			if got, want := pod.Labels[tkestack.UniqHashLabel], tapppod.UniqHash(&tapp.Spec.Template); got != want {
				t.Errorf("uniq hash %s, want the template's %s", got, want)
			}
			if !equality.Semantic.DeepEqual(before, tapp) {
				t.Errorf("the TApp was modified")
			}
			if len(pod.Spec.TopologySpreadConstraints) > 0 && pod.Spec.TopologySpreadConstraints[0].LabelSelector == tapp.Spec.Selector {
				t.Errorf("the pod shares the TApp's selector")
			}
		})
	}
}

func TestTopologyOf(t *testing.T) {
	node := func(labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	}
	for _, c := range []struct {
		name  string
		nodes []*corev1.Node
		want  Topology
	}{
		{"no nodes", nil, Topology{}},
		{"nodes without zones", []*corev1.Node{node(nil), node(map[string]string{corev1.LabelHostname: "n"})}, Topology{}},
		{"an empty zone label", []*corev1.Node{node(map[string]string{corev1.LabelTopologyZone: ""})}, Topology{}},
		{"a node with a zone", []*corev1.Node{nil, node(nil), node(map[string]string{corev1.LabelTopologyZone: "z1"})}, Topology{Zones: true}},
	} {
		if got := TopologyOf(c.nodes); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestSpreadIsNotPartOfTheDiff: pods created before the default spread existed (or while spreadPolicy was
// None) have no such constraint; the plan neither updates, relabels nor recreates them for it, whatever the
// policy, and an image change still goes in place.
func TestSpreadIsNotPartOfTheDiff(t *testing.T) {
	// oldPod is instance id's pod as a server without the default spread created it.
	oldPod := func(tapp *tkestackv1.TApp, id string) *corev1.Pod {
		pod := mustPod(t, tapp, id)
		pod.Spec.TopologySpreadConstraints = nil
		return pod
	}
	for _, policy := range []tkestackv1.SpreadPolicyType{"", tkestackv1.SpreadPolicySpread, tkestackv1.SpreadPolicyNone} {
		t.Run(string(policy)+"/up to date", func(t *testing.T) {
			tapp := newTApp(2)
			tapp.Spec.SpreadPolicy = policy
			plan := ComputePlan(tapp, []*corev1.Pod{oldPod(tapp, "0"), oldPod(tapp, "1")}, nil, testNow)
			if n := len(plan.Creates) + len(plan.InPlaceUpdates) + len(plan.Recreates) + len(plan.Relabels) + len(plan.Deletes); n > 0 {
				t.Errorf("plan acts on pods created without the spread: %+v", plan)
			}
		})
		t.Run(string(policy)+"/foreign hashes run their template", func(t *testing.T) {
			tapp := newTApp(1)
			tapp.Spec.SpreadPolicy = policy
			pod := oldPod(tapp, "0")
			pod.Labels[tkestack.TemplateHashLabel], pod.Labels[tkestack.UniqHashLabel] = "1234567890123", "9876543210987" // the original controller's
			plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
			if len(plan.Relabels) != 1 || len(plan.Recreates)+len(plan.InPlaceUpdates) > 0 {
				t.Errorf("a pod of the original controller without the spread: relabels %v, recreates %v, in place %v; want a relabel only",
					plan.Relabels, plan.Recreates, plan.InPlaceUpdates)
			}
		})
		t.Run(string(policy)+"/an image change goes in place", func(t *testing.T) {
			tapp := newTApp(1)
			tapp.Spec.SpreadPolicy = policy
			pod := oldPod(tapp, "0")
			tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
			if len(plan.InPlaceUpdates) != 1 || len(plan.Recreates) > 0 {
				t.Errorf("in place %v, recreates %v; want one in-place update", plan.InPlaceUpdates, plan.Recreates)
			}
		})
	}
	// A pod created with the spread, and the policy turned to None: nothing either.
	tapp := newTApp(1)
	pod := mustPod(t, tapp, "0")
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		t.Fatalf("NewPod added no spread")
	}
	tapp.Spec.SpreadPolicy = tkestackv1.SpreadPolicyNone
	if plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow); len(plan.InPlaceUpdates)+len(plan.Recreates)+len(plan.Relabels) > 0 {
		t.Errorf("spreadPolicy None acts on a spread pod: %+v", plan)
	}
}
