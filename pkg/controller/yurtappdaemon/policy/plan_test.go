package policy

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

type planInput struct {
	yad          *v1alpha1.YurtAppDaemon
	pools        []*v1alpha1.NodePool
	deployments  []*appsv1.Deployment
	statefulSets []*appsv1.StatefulSet
}

type planWant struct {
	creates     []string // Kind/name@pool
	updates     []string // name:reason,reason
	deletes     []string // Kind/name@pool:reason
	conflicts   []string // name@pool<owner>
	waiting     []string // name@pool
	poolErrors  []string // pool
	adoptions   []string // Kind/name@pool
	releases    []string // Kind/name@pool
	nodepools   []string
	provisioned string // Status/Reason
	updated     string // Status/Reason
}

func summarize(p *Plan) planWant {
	return planWant{
		creates: names(p.Creates, func(c Create) string {
			if c.Deployment != nil {
				return "Deployment/" + c.Deployment.Name + "@" + c.Pool
			}
			return "StatefulSet/" + c.StatefulSet.Name + "@" + c.Pool
		}),
		updates: names(p.Updates, func(u Update) string {
			return fmt.Sprintf("%s:%s", u.Name, strings.Join(names(u.Reasons, func(r UpdateReason) string { return string(r) }), ","))
		}),
		deletes:    names(p.Deletes, func(d Delete) string { return fmt.Sprintf("%s/%s@%s:%s", d.Kind, d.Name, d.Pool, d.Reason) }),
		conflicts:  names(p.Conflicts, func(c Conflict) string { return fmt.Sprintf("%s@%s<%s>", c.Name, c.Pool, c.Owner) }),
		waiting:    names(p.Waiting, func(w Waiting) string { return w.Name + "@" + w.Pool }),
		poolErrors: names(p.PoolErrors, func(e PoolError) string { return e.Pool }),
		adoptions:  names(p.Adoptions, func(a Adoption) string { return fmt.Sprintf("%s/%s@%s", a.Kind, a.Name, a.Pool) }),
		releases:   names(p.Releases, func(r Release) string { return fmt.Sprintf("%s/%s@%s", r.Kind, r.Name, r.Pool) }),
		nodepools:  append([]string{}, p.Status.NodePools...),
		provisioned: string(p.Status.Conditions[0].Type) + "=" + string(p.Status.Conditions[0].Status) + "/" +
			p.Status.Conditions[0].Reason,
		updated: string(p.Status.Conditions[1].Type) + "=" + string(p.Status.Conditions[1].Status) + "/" +
			p.Status.Conditions[1].Reason,
	}
}

func empty() []string { return []string{} }

const (
	provisionedOK      = "WorkLoadProvisioned=True/AllPoolsProvisioned"
	provisionedMissing = "WorkLoadProvisioned=False/WorkloadsMissing"
	updatedOK          = "WorkLoadUpdated=True/AllWorkloadsUpdated"
	updatedOutdated    = "WorkLoadUpdated=False/WorkloadsOutdated"
)

func withImage(yad *v1alpha1.YurtAppDaemon, image string) *v1alpha1.YurtAppDaemon {
	yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = image
	return yad
}

func orphan(d *appsv1.Deployment) *appsv1.Deployment {
	d.OwnerReferences = nil
	return d
}

func TestComputePlan(t *testing.T) {
	bj, hz := edge("beijing"), edge("hangzhou")
	cloud := pool("cloud-1", map[string]string{"role": "cloud"})
	cases := []struct {
		name  string
		input func(t *testing.T) planInput
		want  planWant
	}{
		{
			name: "two selected pools and no child: one Deployment per pool, in name order",
			input: func(t *testing.T) planInput {
				return planInput{yad: newYAD(), pools: []*v1alpha1.NodePool{hz, cloud, bj}}
			},
			want: planWant{creates: []string{"Deployment/web-beijing@beijing", "Deployment/web-hangzhou@hangzhou"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "steady state: nothing to do",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{hz, bj, cloud},
					deployments: []*appsv1.Deployment{liveDeployment(t, yad, hz, 1), liveDeployment(t, yad, bj, 0)}}
			},
			want: planWant{nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "a new pool matches: create its child only",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz, edge("shanghai")},
					deployments: []*appsv1.Deployment{liveDeployment(t, yad, bj, 0), liveDeployment(t, yad, hz, 0)}}
			},
			want: planWant{creates: []string{"Deployment/web-shanghai@shanghai"},
				nodepools: []string{"beijing", "hangzhou", "shanghai"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "a pool loses its label: its child is deleted, the other untouched",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, pool("hangzhou", map[string]string{"role": "core"})},
					deployments: []*appsv1.Deployment{liveDeployment(t, yad, bj, 0), liveDeployment(t, yad, hz, 0)}}
			},
			want: planWant{deletes: []string{"Deployment/web-hangzhou@hangzhou:PoolNotSelected"},
				nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "a pool is deleted: its child is deleted",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{hz},
					deployments: []*appsv1.Deployment{liveDeployment(t, yad, bj, 0), liveDeployment(t, yad, hz, 0)}}
			},
			want: planWant{deletes: []string{"Deployment/web-beijing@beijing:PoolNotSelected"},
				nodepools: []string{"hangzhou"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "template change: every child is updated",
			input: func(t *testing.T) planInput {
				old := newYAD()
				return planInput{yad: withImage(newYAD(), "nginx:1.26"), pools: []*v1alpha1.NodePool{bj, hz},
					deployments: []*appsv1.Deployment{liveDeployment(t, old, bj, 0), liveDeployment(t, old, hz, 0)}}
			},
			want: planWant{updates: []string{"web-beijing:RevisionChanged", "web-hangzhou:RevisionChanged"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "replicas only: children are scaled at the same revision",
			input: func(t *testing.T) planInput {
				old := newYAD()
				yad := newYAD()
				yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](5)
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz},
					deployments: []*appsv1.Deployment{liveDeployment(t, old, bj, 0), liveDeployment(t, old, hz, 0)}}
			},
			want: planWant{updates: []string{"web-beijing:ReplicasChanged", "web-hangzhou:ReplicasChanged"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "template without replicas: a child scaled by an HPA is left alone",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = nil
				d := liveDeployment(t, yad, bj, 0)
				d.Spec.Replicas = ptr.To[int32](7)
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "a taint is added to one pool: only that pool's child is updated",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, edge("hangzhou", taint("k", "v", corev1.TaintEffectNoSchedule))},
					deployments: []*appsv1.Deployment{liveDeployment(t, yad, bj, 0), liveDeployment(t, yad, hz, 0)}}
			},
			want: planWant{updates: []string{"web-hangzhou:PlacementChanged"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "a taint is removed from one pool: only that pool's child is updated",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				tainted := edge("beijing", taint("k", "v", corev1.TaintEffectNoSchedule))
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz},
					deployments: []*appsv1.Deployment{liveDeployment(t, yad, tainted, 0), liveDeployment(t, yad, hz, 0)}}
			},
			want: planWant{updates: []string{"web-beijing:PlacementChanged"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "the pinning was edited by hand: re-rendered",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, bj, 0)
				d.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{updates: []string{"web-beijing:PlacementChanged"},
				nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "an extra nodeSelector key added by someone else is not fought",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, bj, 0)
				d.Spec.Template.Spec.NodeSelector["injected"] = "yes"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "an image edited by hand: re-rendered",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, hz, 0)
				d.Spec.Template.Spec.Containers[0].Image = "nginx:evil"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz},
					deployments: []*appsv1.Deployment{liveDeployment(t, yad, bj, 0), d}}
			},
			want: planWant{updates: []string{"web-hangzhou:ContainersChanged"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "kind change: the Deployments are deleted and StatefulSets created",
			input: func(t *testing.T) planInput {
				old := newYAD()
				return planInput{yad: toStatefulSet(newYAD()), pools: []*v1alpha1.NodePool{bj, hz},
					deployments: []*appsv1.Deployment{liveDeployment(t, old, hz, 0), liveDeployment(t, old, bj, 0)}}
			},
			want: planWant{
				creates:   []string{"StatefulSet/web-beijing@beijing", "StatefulSet/web-hangzhou@hangzhou"},
				deletes:   []string{"Deployment/web-beijing@beijing:KindChanged", "Deployment/web-hangzhou@hangzhou:KindChanged"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "StatefulSet template: only the child at the old revision is updated",
			input: func(t *testing.T) planInput {
				old := toStatefulSet(newYAD())
				yad := toStatefulSet(newYAD())
				yad.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz},
					statefulSets: []*appsv1.StatefulSet{liveStatefulSet(t, old, bj, 0), liveStatefulSet(t, yad, hz, 0)}}
			},
			want: planWant{updates: []string{"web-beijing:RevisionChanged"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "a Deployment of another controller holds a child's name: conflict, never adopted; an orphan holding one is adopted",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				other := liveDeployment(t, yad, hz, 0)
				other.OwnerReferences[0].UID = "other-uid"
				other.OwnerReferences[0].Name = "other"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz, edge("shanghai")},
					deployments: []*appsv1.Deployment{orphan(liveDeployment(t, yad, bj, 0)), other}}
			},
			want: planWant{
				creates:     []string{"Deployment/web-shanghai@shanghai"},
				conflicts:   []string{"web-hangzhou@hangzhou<YurtAppDaemon other>"},
				adoptions:   []string{"Deployment/web-beijing@beijing"},
				nodepools:   []string{"beijing", "hangzhou", "shanghai"},
				provisioned: "WorkLoadProvisioned=False/WorkloadConflict", updated: updatedOK},
		},
		{
			name: "an orphan Deployment whose pods the selector does not match holds a child's name: conflict",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := orphan(liveDeployment(t, yad, bj, 0))
				d.Spec.Template.Labels = map[string]string{"app": "manual"}
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{conflicts: []string{"web-beijing@beijing<no controller>"},
				nodepools: []string{"beijing"}, provisioned: "WorkLoadProvisioned=False/WorkloadConflict", updated: updatedOK},
		},
		{
			name: "orphans of yurt-app-manager (generated names, pool label, selector labels) are adopted under their names, the oldest per pool",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := orphan(liveDeployment(t, yad, bj, 0))
				d.Name, d.UID = "web-beijing-x7k2p", "uid-x7k2p"
				newer := orphan(liveDeployment(t, yad, bj, 5))
				newer.Name, newer.UID = "web-beijing-zz9q1", "uid-zz9q1"
				h := orphan(liveDeployment(t, yad, hz, 0))
				h.Name = "web-hangzhou-abcde"
				delete(h.Labels, PoolNameLabel)                         // mapped by the ref-nodepool annotation
				s := liveStatefulSet(t, toStatefulSet(newYAD()), bj, 0) // other kind: not adopted
				s.OwnerReferences = nil
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz}, deployments: []*appsv1.Deployment{newer, d, h}, statefulSets: []*appsv1.StatefulSet{s}}
			},
			want: planWant{adoptions: []string{"Deployment/web-beijing-x7k2p@beijing", "Deployment/web-hangzhou-abcde@hangzhou"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "orphans are not adopted for a pool that has a child, nor for a pool not selected",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				extra := orphan(liveDeployment(t, yad, bj, 5))
				extra.Name = "web-beijing-manual"
				unselected := orphan(liveDeployment(t, yad, cloud, 0))
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, cloud}, deployments: []*appsv1.Deployment{liveDeployment(t, yad, bj, 0), extra, unselected}}
			},
			want: planWant{nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "a child whose pods the selector no longer matches is released, and its name waited for",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, bj, 0)
				d.Spec.Template.Labels["app"] = "debug"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz}, deployments: []*appsv1.Deployment{d, liveDeployment(t, yad, hz, 0)}}
			},
			want: planWant{releases: []string{"Deployment/web-beijing@beijing"}, waiting: []string{"web-beijing@beijing"},
				nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "nothing is adopted or released while the YurtAppDaemon is being deleted",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				yad.DeletionTimestamp = &metav1.Time{}
				d := liveDeployment(t, yad, hz, 0)
				d.Spec.Template.Labels["app"] = "debug"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz}, deployments: []*appsv1.Deployment{orphan(liveDeployment(t, yad, bj, 0)), d}}
			},
			want: planWant{nodepools: []string{"beijing", "hangzhou"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "two children for one pool: the newer is deleted",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				legacy := liveDeployment(t, yad, bj, 0) // older, generateName-style name
				legacy.Name, legacy.UID = "web-beijing-x7k2p", "uid-legacy"
				newer := liveDeployment(t, yad, bj, 5)
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{newer, legacy}}
			},
			want: planWant{deletes: []string{"Deployment/web-beijing@beijing:Duplicate"},
				nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "two children created at the same time: the one with the deterministic name is kept",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				a := liveDeployment(t, yad, bj, 0)
				a.Name, a.UID = "web-beijing-aaaaa", "uid-a"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{a, liveDeployment(t, yad, bj, 0)}}
			},
			want: planWant{deletes: []string{"Deployment/web-beijing-aaaaa@beijing:Duplicate"},
				nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "a child of the original controller (annotation only, generated name) is kept and re-rendered",
			input: func(t *testing.T) planInput {
				old := withImage(newYAD(), "nginx:1.0")
				d := liveDeployment(t, old, bj, 0)
				d.Name = "web-beijing-q8z4m"
				delete(d.Labels, PoolNameLabel)
				delete(d.Annotations, PlacementHashAnnotation)
				return planInput{yad: newYAD(), pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{updates: []string{"web-beijing-q8z4m:RevisionChanged,PlacementChanged,MetadataChanged"},
				nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOutdated},
		},
		{
			name: "a child of ours that names no pool is deleted",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, bj, 0)
				d.Name = "web-stray"
				delete(d.Labels, PoolNameLabel)
				delete(d.Annotations, RefNodePoolAnnotation)
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d, liveDeployment(t, yad, bj, 0)}}
			},
			want: planWant{deletes: []string{"Deployment/web-stray@:NoPool"},
				nodepools: []string{"beijing"}, provisioned: provisionedOK, updated: updatedOK},
		},
		{
			name: "our terminating child holds the name: wait, do not create nor delete",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, bj, 0)
				d.DeletionTimestamp = &testNow
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{waiting: []string{"web-beijing@beijing"},
				nodepools: []string{"beijing"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "our child under the name is deleted by this plan: wait for it",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, bj, 0)
				delete(d.Labels, PoolNameLabel)
				delete(d.Annotations, RefNodePoolAnnotation)
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{deletes: []string{"Deployment/web-beijing@:NoPool"}, waiting: []string{"web-beijing@beijing"},
				nodepools: []string{"beijing"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "our child serving another pool holds the name: conflict",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				x := liveDeployment(t, yad, edge("x"), 0)
				x.Name = "web-beijing"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, edge("x")}, deployments: []*appsv1.Deployment{x}}
			},
			want: planWant{conflicts: []string{"web-beijing@beijing<YurtAppDaemon web (pool x)>"},
				nodepools: []string{"beijing", "x"}, provisioned: "WorkLoadProvisioned=False/WorkloadConflict", updated: updatedOK},
		},
		{
			name: "nil nodepoolSelector selects nothing: every child is deleted",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				children := []*appsv1.Deployment{liveDeployment(t, yad, hz, 0), liveDeployment(t, yad, bj, 0)}
				yad.Spec.NodePoolSelector = nil
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj, hz}, deployments: children}
			},
			want: planWant{deletes: []string{"Deployment/web-beijing@beijing:PoolNotSelected", "Deployment/web-hangzhou@hangzhou:PoolNotSelected"},
				nodepools: empty(), provisioned: "WorkLoadProvisioned=True/NoPoolSelected", updated: updatedOK},
		},
		{
			name: "empty nodepoolSelector selects every pool",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				yad.Spec.NodePoolSelector = &metav1.LabelSelector{}
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{cloud, bj}}
			},
			want: planWant{creates: []string{"Deployment/web-beijing@beijing", "Deployment/web-cloud-1@cloud-1"},
				nodepools: []string{"beijing", "cloud-1"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "a pool name that is not a label value: reported, no child",
			input: func(t *testing.T) planInput {
				return planInput{yad: newYAD(), pools: []*v1alpha1.NodePool{bj, edge(strings.Repeat("p", 70))}}
			},
			want: planWant{creates: []string{"Deployment/web-beijing@beijing"}, poolErrors: []string{strings.Repeat("p", 70)},
				nodepools: []string{"beijing", strings.Repeat("p", 70)}, provisioned: "WorkLoadProvisioned=False/InvalidPool", updated: updatedOK},
		},
		{
			name: "the YurtAppDaemon is being deleted: nothing is done",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				children := []*appsv1.Deployment{liveDeployment(t, yad, bj, 0)}
				yad.DeletionTimestamp = &testNow
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{hz}, deployments: children}
			},
			want: planWant{nodepools: []string{"hangzhou"}, provisioned: provisionedMissing, updated: updatedOK},
		},
		{
			name: "workloads of other namespaces are ignored",
			input: func(t *testing.T) planInput {
				yad := newYAD()
				d := liveDeployment(t, yad, bj, 0)
				d.Namespace = "other"
				return planInput{yad: yad, pools: []*v1alpha1.NodePool{bj}, deployments: []*appsv1.Deployment{d}}
			},
			want: planWant{creates: []string{"Deployment/web-beijing@beijing"},
				nodepools: []string{"beijing"}, provisioned: provisionedMissing, updated: updatedOK},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input(t)
			before := in.yad.DeepCopy()
			plan, err := ComputePlan(in.yad, in.pools, in.deployments, in.statefulSets)
			if err != nil {
				t.Fatalf("ComputePlan: %v", err)
			}
			if !reflect.DeepEqual(in.yad, before) {
				t.Errorf("ComputePlan mutated the YurtAppDaemon")
			}
			want := tc.want
			for _, l := range []*[]string{&want.creates, &want.updates, &want.deletes, &want.conflicts, &want.waiting, &want.poolErrors, &want.adoptions, &want.releases, &want.nodepools} {
				if *l == nil {
					*l = empty()
				}
			}
			if got := summarize(plan); !reflect.DeepEqual(got, want) {
				t.Errorf("plan =\n  %+v\nwant\n  %+v", got, want)
			}
			if plan.Revision != RevisionName(in.yad) || plan.Status.CurrentRevision != plan.Revision {
				t.Errorf("revision = %q / %q, want %q", plan.Revision, plan.Status.CurrentRevision, RevisionName(in.yad))
			}
		})
	}
}

func TestComputePlanErrors(t *testing.T) {
	cases := map[string]func(*v1alpha1.YurtAppDaemon){
		"no template": func(y *v1alpha1.YurtAppDaemon) { y.Spec.WorkloadTemplate = v1alpha1.WorkloadTemplate{} },
		"two templates": func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.StatefulSetTemplate = &v1alpha1.StatefulSetTemplateSpec{}
		},
		"no selector": func(y *v1alpha1.YurtAppDaemon) { y.Spec.Selector = nil },
		"invalid nodepoolSelector": func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			yad := newYAD()
			children := []*appsv1.Deployment{liveDeployment(t, yad, edge("beijing"), 0)}
			mutate(yad)
			plan, err := ComputePlan(yad, []*v1alpha1.NodePool{edge("beijing")}, children, nil)
			if err == nil || plan != nil {
				t.Errorf("ComputePlan = %+v, %v; want no plan and an error", plan, err)
			}
		})
	}
}

func TestComputePlanObjects(t *testing.T) {
	yad := newYAD()
	bj := edge("beijing", taint("k", "v", corev1.TaintEffectNoSchedule))
	plan, err := ComputePlan(yad, []*v1alpha1.NodePool{bj}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := RenderDeployment(yad, bj, RevisionName(yad))
	if len(plan.Creates) != 1 || !reflect.DeepEqual(plan.Creates[0].Deployment, want) || plan.Creates[0].StatefulSet != nil {
		t.Errorf("Creates = %+v, want the rendered Deployment", plan.Creates)
	}

	// Deployment update: live metadata and immutable selector kept, rendered spec otherwise.
	old := newYAD()
	live := liveDeployment(t, old, edge("beijing"), 0)
	live.Annotations["deployment.kubernetes.io/revision"] = "3"
	live.Labels["added-by-someone"] = "x"
	live.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", PoolNameLabel: "beijing", "legacy": "1"}}
	yad = withImage(newYAD(), "nginx:1.26")
	plan, err = ComputePlan(yad, []*v1alpha1.NodePool{bj}, []*appsv1.Deployment{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Updates) != 1 {
		t.Fatalf("Updates = %+v, want one", plan.Updates)
	}
	u := plan.Updates[0]
	if want := []UpdateReason{UpdateRevision, UpdatePlacement}; !reflect.DeepEqual(u.Reasons, want) {
		t.Errorf("reasons = %v, want %v", u.Reasons, want)
	}
	d := u.Deployment
	if u.StatefulSet != nil || d == nil || d.Name != "web-beijing" || d.UID != live.UID || d.ResourceVersion != "7" || u.UID != live.UID {
		t.Fatalf("update identity wrong: %+v", u)
	}
	if d.Annotations["deployment.kubernetes.io/revision"] != "3" || d.Labels["added-by-someone"] != "x" ||
		d.Labels[RevisionHashLabel] != RevisionName(yad) || d.Annotations[PlacementHashAnnotation] != PlacementHash(bj) {
		t.Errorf("metadata = %v %v", d.Labels, d.Annotations)
	}
	if !reflect.DeepEqual(d.Spec.Selector, live.Spec.Selector) {
		t.Errorf("selector = %v, want the live (immutable) one", d.Spec.Selector)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.26" {
		t.Errorf("image = %q", img)
	}
	if tols := d.Spec.Template.Spec.Tolerations; len(tols) != 1 || tols[0].Key != "k" {
		t.Errorf("tolerations = %v", tols)
	}
	if live.Spec.Template.Spec.Containers[0].Image != "nginx:1.25" {
		t.Errorf("ComputePlan mutated the live Deployment")
	}

	// Replicas-only change: the pod template of the update is the live one (no pod restarts).
	scaled := newYAD()
	scaled.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](4)
	live = liveDeployment(t, newYAD(), edge("beijing"), 0)
	plan, _ = ComputePlan(scaled, []*v1alpha1.NodePool{edge("beijing")}, []*appsv1.Deployment{live}, nil)
	if len(plan.Updates) != 1 || *plan.Updates[0].Deployment.Spec.Replicas != 4 ||
		!reflect.DeepEqual(plan.Updates[0].Deployment.Spec.Template, live.Spec.Template) {
		t.Errorf("replicas update = %+v", plan.Updates)
	}

	// StatefulSet update: immutable fields and unmanaged replicas from the live object.
	sOld := toStatefulSet(newYAD())
	sLive := liveStatefulSet(t, sOld, edge("beijing"), 0)
	sLive.Spec.Replicas = ptr.To[int32](6)
	mode := corev1.PersistentVolumeFilesystem
	sLive.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeMode: &mode}}}
	sLive.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	sYAD := toStatefulSet(withImage(newYAD(), "nginx:1.26"))
	sYAD.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Replicas = nil
	sYAD.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.ServiceName = "changed"
	plan, err = ComputePlan(sYAD, []*v1alpha1.NodePool{edge("beijing")}, nil, []*appsv1.StatefulSet{sLive})
	if err != nil || len(plan.Updates) != 1 || plan.Updates[0].StatefulSet == nil {
		t.Fatalf("plan = %+v, %v", plan, err)
	}
	s := plan.Updates[0].StatefulSet
	if *s.Spec.Replicas != 6 || s.Spec.ServiceName != "web" || s.Spec.PodManagementPolicy != appsv1.ParallelPodManagement ||
		!reflect.DeepEqual(s.Spec.VolumeClaimTemplates, sLive.Spec.VolumeClaimTemplates) || s.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" {
		t.Errorf("statefulset update spec = %+v", s.Spec)
	}
}
