package policy

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
)

func TestSelectPools(t *testing.T) {
	pools := []*v1alpha1.NodePool{pool("a", north), pool("b", nil), pool("c", map[string]string{"region": "south"}), nil}
	cases := []struct {
		name        string
		names       []string
		selector    *metav1.LabelSelector
		want        []string
		wantMissing []string
		wantErr     bool
	}{
		{name: "nil selector and no names select none"},
		{name: "empty selector selects all", selector: &metav1.LabelSelector{}, want: []string{"a", "b", "c"}},
		{name: "selector", selector: &metav1.LabelSelector{MatchLabels: north}, want: []string{"a"}},
		{name: "union of names and selector", names: []string{"c", "b"}, selector: &metav1.LabelSelector{MatchLabels: north}, want: []string{"a", "b", "c"}},
		{name: "named pool missing", names: []string{"b", "zz", "x"}, want: []string{"b"}, wantMissing: []string{"x", "zz"}},
		{name: "invalid selector", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bad"}}}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yas := newYAS()
			yas.Spec.Pools, yas.Spec.NodePoolSelector = tc.names, tc.selector
			got, missing, err := SelectPools(yas, pools)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if !reflect.DeepEqual(names, tc.want) || !reflect.DeepEqual(missing, tc.wantMissing) {
				t.Errorf("selected %v missing %v, want %v and %v", names, missing, tc.want, tc.wantMissing)
			}
		})
	}
}

// rendered returns the live Deployment of pool as the controller created it at revision.
func rendered(t *testing.T, yas *v1beta1.YurtAppSet, p *v1alpha1.NodePool, revision, name string, created time.Time) *appsv1.Deployment {
	t.Helper()
	d, err := RenderDeployment(yas, p, revision)
	if err != nil {
		t.Fatal(err)
	}
	return live(d, name, created)
}

type planSummary struct {
	Creates, Adoptions, Releases []string
	Updates                      []string
	Deletes                      []string
	PoolErrors                   []string
}

func summarize(p *Plan) planSummary {
	var s planSummary
	for _, c := range p.Creates {
		s.Creates = append(s.Creates, c.Pool)
	}
	for _, a := range p.Adoptions {
		s.Adoptions = append(s.Adoptions, a.Pool+"/"+a.Name)
	}
	for _, r := range p.Releases {
		s.Releases = append(s.Releases, r.Name)
	}
	for _, u := range p.Updates {
		s.Updates = append(s.Updates, fmt.Sprintf("%s %v kept=%t", u.Name, u.Reasons, u.PodsKept))
	}
	for _, d := range p.Deletes {
		s.Deletes = append(s.Deletes, fmt.Sprintf("%s %s", d.Name, d.Reason))
	}
	for _, e := range p.PoolErrors {
		s.PoolErrors = append(s.PoolErrors, e.Pool)
	}
	return s
}

func TestComputePlan(t *testing.T) {
	bj, hz := pool("beijing", north), pool("hangzhou", north)
	south := pool("shenzhen", map[string]string{"region": "south"})
	pools := []*v1alpha1.NodePool{bj, hz, south}
	base := newYAS()
	rev := RevisionName(base)

	cases := []struct {
		name        string
		yas         func() *v1beta1.YurtAppSet
		deployments func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment
		sts         []*appsv1.StatefulSet
		want        planSummary
	}{
		{
			name: "one Deployment per selected pool",
			want: planSummary{Creates: []string{"beijing", "hangzhou"}},
		},
		{
			name: "in sync: nothing to do",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, yas, bj, rev, "web-beijing-x1", t0), rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)}
			},
		},
		{
			name: "a pool named in spec.pools joins the selector's",
			yas: func() *v1beta1.YurtAppSet {
				yas := newYAS()
				yas.Spec.Pools = []string{"shenzhen"}
				return yas
			},
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, newYAS(), bj, rev, "web-beijing-x1", t0), rendered(t, newYAS(), south, rev, "web-shenzhen-x3", t0)}
			},
			// The revision is unchanged: the pool list is not hashed.
			want: planSummary{Creates: []string{"hangzhou"}},
		},
		{
			name: "pool no longer selected",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, yas, bj, rev, "web-beijing-x1", t0), rendered(t, yas, hz, rev, "web-hangzhou-x2", t0),
					rendered(t, yas, south, rev, "web-shenzhen-x3", t0)}
			},
			want: planSummary{Deletes: []string{"web-shenzhen-x3 PoolNotSelected"}},
		},
		{
			name: "duplicate: the oldest kept",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, yas, bj, rev, "web-beijing-new", t0.Add(time.Minute)), rendered(t, yas, bj, rev, "web-beijing-old", t0),
					rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)}
			},
			want: planSummary{Deletes: []string{"web-beijing-new Duplicate"}},
		},
		{
			name: "kind changed: the Deployments go, StatefulSets come",
			yas:  func() *v1beta1.YurtAppSet { return withStatefulSet(newYAS()) },
			deployments: func(*v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, base, bj, rev, "web-beijing-x1", t0)}
			},
			want: planSummary{Creates: []string{"beijing", "hangzhou"}, Deletes: []string{"web-beijing-x1 KindChanged"}},
		},
		{
			name: "orphan labelled for the YurtAppSet adopted, others left alone",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				orphan := rendered(t, yas, bj, "web-upstream", "web-beijing-abcde", t0)
				orphan.OwnerReferences = nil
				stranger := rendered(t, yas, hz, rev, "other-hangzhou", t0)
				stranger.OwnerReferences = nil
				delete(stranger.Labels, RefYurtAppSetLabel)
				unselected := rendered(t, yas, south, rev, "web-shenzhen-zz", t0)
				unselected.OwnerReferences = nil
				return []*appsv1.Deployment{orphan, stranger, unselected}
			},
			want: planSummary{Creates: []string{"hangzhou"}, Adoptions: []string{"beijing/web-beijing-abcde"}},
		},
		{
			name: "label naming the YurtAppSet removed: released",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				d := rendered(t, yas, bj, rev, "web-beijing-x1", t0)
				d.Labels[RefYurtAppSetLabel] = "other"
				return []*appsv1.Deployment{d, rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)}
			},
			want: planSummary{Creates: []string{"beijing"}, Releases: []string{"web-beijing-x1"}},
		},
		{
			name: "terminating workload ignored, a new one created",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				d := rendered(t, yas, bj, rev, "web-beijing-x1", t0)
				d.DeletionTimestamp = &metav1.Time{Time: t0}
				return []*appsv1.Deployment{d, rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)}
			},
			want: planSummary{Creates: []string{"beijing"}},
		},
		{
			name: "new revision, same pods (replicas changed): pod template kept",
			yas: func() *v1beta1.YurtAppSet {
				yas := newYAS()
				yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](4)
				return yas
			},
			deployments: func(*v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, base, bj, rev, "web-beijing-x1", t0), rendered(t, base, hz, rev, "web-hangzhou-x2", t0)}
			},
			want: planSummary{Updates: []string{"web-beijing-x1 [SpecChanged MetadataChanged] kept=true", "web-hangzhou-x2 [SpecChanged MetadataChanged] kept=true"}},
		},
		{
			name: "new image: pods rewritten",
			yas: func() *v1beta1.YurtAppSet {
				yas := newYAS()
				yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.21"
				return yas
			},
			deployments: func(*v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, base, bj, rev, "web-beijing-x1", t0), rendered(t, base, hz, rev, "web-hangzhou-x2", t0)}
			},
			want: planSummary{Updates: []string{"web-beijing-x1 [PodTemplateChanged MetadataChanged] kept=false", "web-hangzhou-x2 [PodTemplateChanged MetadataChanged] kept=false"}},
		},
		{
			name: "image edited by hand: repaired",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				d := rendered(t, yas, bj, rev, "web-beijing-x1", t0)
				d.Spec.Template.Spec.Containers[0].Image = "evil"
				return []*appsv1.Deployment{d, rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)}
			},
			want: planSummary{Updates: []string{"web-beijing-x1 [PodTemplateChanged] kept=false"}},
		},
		{
			name: "yurt-manager's workload, same content under its own revision: adopted, then metadata only",
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				d := rendered(t, yas, bj, "web-7d9f8c6b5", "web-beijing-qwert", t0)
				return []*appsv1.Deployment{d, rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)}
			},
			want: planSummary{Updates: []string{"web-beijing-qwert [MetadataChanged] kept=true"}},
		},
		{
			name: "being deleted: nothing",
			yas: func() *v1beta1.YurtAppSet {
				yas := newYAS()
				yas.DeletionTimestamp = &metav1.Time{Time: t0}
				return yas
			},
			deployments: func(yas *v1beta1.YurtAppSet) []*appsv1.Deployment {
				return []*appsv1.Deployment{rendered(t, yas, south, rev, "web-shenzhen-x3", t0)}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yas := newYAS()
			if tc.yas != nil {
				yas = tc.yas()
			}
			var deployments []*appsv1.Deployment
			if tc.deployments != nil {
				deployments = tc.deployments(yas)
			}
			plan, err := ComputePlan(yas, RevisionName(yas), pools, deployments, tc.sts)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(plan); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// An update keeps the live pod template (and its pods) when only the revision changed, and keeps what
// the API server owns.
func TestUpdateKeepsPodsAndImmutableFields(t *testing.T) {
	base := newYAS()
	bj := pool("beijing", north)
	old := rendered(t, base, bj, RevisionName(base), "web-beijing-x1", t0)
	yas := newYAS()
	yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](4)
	plan, err := ComputePlan(yas, RevisionName(yas), []*v1alpha1.NodePool{bj}, []*appsv1.Deployment{old}, nil)
	if err != nil || len(plan.Updates) != 1 {
		t.Fatalf("plan %+v err %v", plan, err)
	}
	u := plan.Updates[0].Deployment
	if !reflect.DeepEqual(u.Spec.Template, old.Spec.Template) {
		t.Errorf("pod template rewritten:\n%+v\n%+v", u.Spec.Template, old.Spec.Template)
	}
	if *u.Spec.Replicas != 4 || u.Labels[RevisionHashLabel] != RevisionName(yas) || u.ResourceVersion != "7" || u.Spec.Selector != old.Spec.Selector && !reflect.DeepEqual(u.Spec.Selector, old.Spec.Selector) {
		t.Errorf("update = replicas %d labels %v rv %s", *u.Spec.Replicas, u.Labels, u.ResourceVersion)
	}
}

func TestComputePlanStatus(t *testing.T) {
	bj, hz := pool("beijing", north), pool("hangzhou", north)
	yas := newYAS()
	rev := RevisionName(yas)
	notReady := rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)
	notReady.Status.ReadyReplicas = 1
	cases := []struct {
		name        string
		names       []string
		selector    *metav1.LabelSelector
		deployments []*appsv1.Deployment
		total       int32
		ready       int32
		updated     int32
		want        map[v1beta1.YurtAppSetConditionType]string // status/reason
	}{
		{
			name: "no pool", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"none": "x"}},
			want: map[v1beta1.YurtAppSetConditionType]string{ConditionPoolFound: "False/NoFindPools", ConditionAppReady: "False/NoWorkloadFound", ConditionAppDispatched: "True/AllWorkloadsCreated"},
		},
		{
			name: "named pool missing", names: []string{"gone"}, selector: &metav1.LabelSelector{MatchLabels: north},
			want: map[v1beta1.YurtAppSetConditionType]string{ConditionPoolFound: "False/PoolNotFound", ConditionAppDispatched: "False/WorkloadsMissing"},
		},
		{
			name: "one ready, one not", selector: &metav1.LabelSelector{MatchLabels: north},
			deployments: []*appsv1.Deployment{rendered(t, yas, bj, rev, "web-beijing-x1", t0), notReady},
			total:       2, ready: 1, updated: 2,
			want: map[v1beta1.YurtAppSetConditionType]string{ConditionPoolFound: "True/FindPools", ConditionAppReady: "False/NotAllWorkloadsReady",
				ConditionAppDispatched: "True/AllWorkloadsCreated", ConditionAppDeleted: "True/NoUnexpectedWorkload", ConditionAppUpdated: "True/AllWorkloadsUpdated"},
		},
		{
			name: "all ready", selector: &metav1.LabelSelector{MatchLabels: north},
			deployments: []*appsv1.Deployment{rendered(t, yas, bj, rev, "web-beijing-x1", t0), rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)},
			total:       2, ready: 2, updated: 2,
			want: map[v1beta1.YurtAppSetConditionType]string{ConditionAppReady: "True/AllWorkloadsReady"},
		},
		{
			name: "outdated revision", selector: &metav1.LabelSelector{MatchLabels: north},
			deployments: []*appsv1.Deployment{rendered(t, yas, bj, "web-old", "web-beijing-x1", t0), rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)},
			total:       2, ready: 2, updated: 1,
			want: map[v1beta1.YurtAppSetConditionType]string{ConditionAppUpdated: "False/UpdatingWorkloads"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			y := newYAS()
			y.Spec.Pools, y.Spec.NodePoolSelector = tc.names, tc.selector
			plan, err := ComputePlan(y, rev, []*v1alpha1.NodePool{bj, hz}, tc.deployments, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := plan.Status
			if s.TotalWorkloads != tc.total || s.ReadyWorkloads != tc.ready || s.UpdatedWorkloads != tc.updated {
				t.Errorf("total/ready/updated = %d/%d/%d, want %d/%d/%d", s.TotalWorkloads, s.ReadyWorkloads, s.UpdatedWorkloads, tc.total, tc.ready, tc.updated)
			}
			got := map[v1beta1.YurtAppSetConditionType]string{}
			for _, c := range s.Conditions {
				got[c.Type] = string(c.Status) + "/" + c.Reason
			}
			for typ, want := range tc.want {
				if got[typ] != want {
					t.Errorf("%s = %s, want %s", typ, got[typ], want)
				}
			}
			if len(s.Conditions) != 5 {
				t.Errorf("%d conditions, want 5", len(s.Conditions))
			}
		})
	}
}

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	then, now := metav1.NewTime(t0), metav1.NewTime(t0.Add(time.Hour))
	conds := SetCondition(nil, v1beta1.YurtAppSetCondition{Type: ConditionAppReady, Status: corev1.ConditionFalse, Reason: "A"}, then)
	conds = SetCondition(conds, v1beta1.YurtAppSetCondition{Type: ConditionAppReady, Status: corev1.ConditionFalse, Reason: "B"}, now)
	if len(conds) != 1 || !conds[0].LastTransitionTime.Equal(&then) || conds[0].Reason != "B" {
		t.Errorf("same status: %+v", conds)
	}
	conds = SetCondition(conds, v1beta1.YurtAppSetCondition{Type: ConditionAppReady, Status: corev1.ConditionTrue}, now)
	if !conds[0].LastTransitionTime.Equal(&now) {
		t.Errorf("new status kept the old transition time: %+v", conds)
	}
}

// The revision covers the template and the tweaks, not the pool selection.
func TestRevisionCoversWorkloadOnly(t *testing.T) {
	a := newYAS()
	b := newYAS()
	b.Spec.Pools = []string{"x"}
	b.Spec.NodePoolSelector = nil
	if RevisionName(a) != RevisionName(b) {
		t.Errorf("pool selection changed the revision")
	}
	b.Spec.Workload.WorkloadTweaks = []v1beta1.WorkloadTweak{{Pools: []string{"x"}, Tweaks: v1beta1.Tweaks{Replicas: ptr.To[int32](1)}}}
	if RevisionName(a) == RevisionName(b) {
		t.Errorf("a tweak did not change the revision")
	}
	one := int32(1)
	b.Status.CollisionCount = &one
	c := b.DeepCopy()
	c.Status.CollisionCount = nil
	if RevisionName(b) == RevisionName(c) {
		t.Errorf("collisionCount did not change the revision")
	}
}

// A taint added to a pool that its pods do not tolerate re-renders the pods of that pool only.
func TestPoolTaintRerendersItsPool(t *testing.T) {
	yas := newYAS()
	rev := RevisionName(yas)
	bj, hz := pool("beijing", north), pool("hangzhou", north)
	deployments := []*appsv1.Deployment{rendered(t, yas, bj, rev, "web-beijing-x1", t0), rendered(t, yas, hz, rev, "web-hangzhou-x2", t0)}
	tainted := pool("beijing", north, corev1.Taint{Key: "edge", Effect: corev1.TaintEffectNoSchedule})
	plan, err := ComputePlan(yas, rev, []*v1alpha1.NodePool{tainted, hz}, deployments, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summarize(plan), (planSummary{Updates: []string{"web-beijing-x1 [PodTemplateChanged] kept=false"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("plan %+v, want %+v", got, want)
	}
}

// A Deployment written as yurt-manager's ApplyTemplate writes it (built here field by field, not through
// RenderDeployment) for a pool with a replicas and image tweak, orphaned by a migration: it is adopted,
// then only its metadata is written (its revision label), its pod template and pods kept; a later change
// of the template rewrites its pods.
func TestYurtManagersTweakedWorkloadAdoptedWithItsPods(t *testing.T) {
	bj := pool("beijing", north)
	yas := newYAS()
	yas.Spec.Workload.WorkloadTweaks = []v1beta1.WorkloadTweak{{Pools: []string{"beijing"}, Tweaks: v1beta1.Tweaks{
		Replicas: ptr.To[int32](3), ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.19.10"}}}}}
	upstreamRevision := "web-5c8b7f9d4"
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns",
			Labels:      map[string]string{"app": "web", PoolNameLabel: "beijing", RevisionHashLabel: upstreamRevision, RefYurtAppSetLabel: "web"},
			Annotations: map[string]string{"team": "a", RefNodePoolAnnotation: "beijing"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", PoolNameLabel: "beijing"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", PoolNameLabel: "beijing", RevisionHashLabel: upstreamRevision}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"disk": "ssd", "apps.openyurt.io/nodepool": "beijing"},
					Containers:   []corev1.Container{{Name: "nginx", Image: "nginx:1.19.10"}},
				},
			},
		},
	}
	orphan := live(d, "web-beijing-qwert", t0)
	pools := []*v1alpha1.NodePool{bj}

	plan, err := ComputePlan(yas, RevisionName(yas), pools, []*appsv1.Deployment{orphan}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summarize(plan), (planSummary{Adoptions: []string{"beijing/web-beijing-qwert"}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("orphaned: plan %+v, want %+v", got, want)
	}

	adopted := orphan.DeepCopy()
	adopted.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(yas, ControllerKind)}
	plan, err = ComputePlan(yas, RevisionName(yas), pools, []*appsv1.Deployment{adopted}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summarize(plan), (planSummary{Updates: []string{"web-beijing-qwert [MetadataChanged] kept=true"}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("adopted: plan %+v, want %+v", got, want)
	}
	if u := plan.Updates[0].Deployment; !reflect.DeepEqual(u.Spec.Template, adopted.Spec.Template) || u.Labels[RevisionHashLabel] != RevisionName(yas) {
		t.Errorf("the update rewrites the pod template or misses the revision: %+v", u)
	}

	changed := yas.DeepCopy()
	changed.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Annotations = map[string]string{"rollout": "1"}
	plan, err = ComputePlan(changed, RevisionName(changed), pools, []*appsv1.Deployment{adopted}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summarize(plan), (planSummary{Updates: []string{"web-beijing-qwert [PodTemplateChanged MetadataChanged] kept=false"}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("template changed: plan %+v, want %+v", got, want)
	}
	if img := plan.Updates[0].Deployment.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.19.10" {
		t.Errorf("the rewritten pods run %s, want the tweak's nginx:1.19.10", img)
	}
}
