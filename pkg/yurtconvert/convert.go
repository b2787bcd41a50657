package yurtconvert

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	yadpolicy "github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
	yaspolicy "github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
)

// ConvertedFromAnnotation on a YurtAppSet made by the conversion records the UID of the YurtAppDaemon it
// replaces: a re-run finds its own YurtAppSet and resumes instead of refusing.
const ConvertedFromAnnotation = "apps.openyurt.io/converted-from-yurtappdaemon"

// YurtAppSet returns the YurtAppSet that renders the workloads of yad: the same name, namespace, labels
// and annotations (without kubectl's last-applied-configuration, which describes the YurtAppDaemon),
// spec.workload.workloadTemplate the YurtAppDaemon's template with the template's selector set to the
// YurtAppDaemon's spec.selector (the YurtAppDaemon controller renders its workloads with that selector;
// the YurtAppSet controller with the template's), spec.nodepoolSelector and revisionHistoryLimit kept, no
// tweaks. ConvertedFromAnnotation records yad's UID.
func YurtAppSet(yad *v1alpha1.YurtAppDaemon) (*v1beta1.YurtAppSet, error) {
	if yad.Spec.Selector == nil {
		return nil, fmt.Errorf("YurtAppDaemon %s/%s has no spec.selector", yad.Namespace, yad.Name)
	}
	if _, err := yadpolicy.TemplateType(yad); err != nil {
		return nil, fmt.Errorf("YurtAppDaemon %s/%s: %w", yad.Namespace, yad.Name, err)
	}
	yas := &v1beta1.YurtAppSet{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.SchemeGroupVersion.String(), Kind: "YurtAppSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        yad.Name,
			Namespace:   yad.Namespace,
			Labels:      copyMap(yad.Labels),
			Annotations: copyMap(yad.Annotations),
		},
		Spec: v1beta1.YurtAppSetSpec{
			NodePoolSelector:     yad.Spec.NodePoolSelector.DeepCopy(),
			RevisionHistoryLimit: yad.Spec.RevisionHistoryLimit,
		},
	}
	delete(yas.Annotations, corev1.LastAppliedConfigAnnotation)
	if yas.Annotations == nil {
		yas.Annotations = map[string]string{}
	}
	yas.Annotations[ConvertedFromAnnotation] = string(yad.UID)
	if len(yas.Labels) == 0 {
		yas.Labels = nil
	}
	switch t := yad.Spec.WorkloadTemplate; {
	case t.DeploymentTemplate != nil:
		d := t.DeploymentTemplate.DeepCopy()
		d.Spec.Selector = yad.Spec.Selector.DeepCopy()
		yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate = &v1beta1.DeploymentTemplateSpec{ObjectMeta: d.ObjectMeta, Spec: d.Spec}
	case t.StatefulSetTemplate != nil:
		s := t.StatefulSetTemplate.DeepCopy()
		s.Spec.Selector = yad.Spec.Selector.DeepCopy()
		yas.Spec.Workload.WorkloadTemplate.StatefulSetTemplate = &v1beta1.StatefulSetTemplateSpec{ObjectMeta: s.ObjectMeta, Spec: s.Spec}
	}
	return yas, nil
}

// Workloads are the live workloads of a namespace.
type Workloads struct {
	Deployments  []*appsv1.Deployment
	StatefulSets []*appsv1.StatefulSet
}

// Handed is a workload handed over: the child of the YurtAppDaemon for Pool.
type Handed struct {
	Pool string
	Kind string
	Name string
	UID  types.UID
}

// Children returns the workloads that belong to the conversion of yad, by pool order: those controlled by
// the YurtAppDaemon (its UID), and, for a resumed run, the orphans already labelled
// RefYurtAppSetLabel=<name> or controlled by the YurtAppSet of that name (yasUID, empty before it exists),
// of the template's kind.
func Children(yad *v1alpha1.YurtAppDaemon, yasUID types.UID, live Workloads) []Handed {
	kind, _ := yadpolicy.TemplateType(yad)
	mine := func(meta *metav1.ObjectMeta) bool {
		if meta.Namespace != yad.Namespace {
			return false
		}
		ref := metav1.GetControllerOfNoCopy(meta)
		switch {
		case ref != nil:
			return ref.UID == yad.UID || (yasUID != "" && ref.UID == yasUID)
		default:
			return meta.Labels[openyurt.YurtAppSetOwnerLabel] == yad.Name
		}
	}
	pool := func(meta *metav1.ObjectMeta) string {
		if p := meta.Labels[openyurt.PoolNameLabel]; p != "" {
			return p
		}
		return meta.Annotations[yadpolicy.RefNodePoolAnnotation]
	}
	var out []Handed
	if kind == yadpolicy.DeploymentKind {
		for _, d := range live.Deployments {
			if mine(&d.ObjectMeta) {
				out = append(out, Handed{Pool: pool(&d.ObjectMeta), Kind: "Deployment", Name: d.Name, UID: d.UID})
			}
		}
	} else {
		for _, s := range live.StatefulSets {
			if mine(&s.ObjectMeta) {
				out = append(out, Handed{Pool: pool(&s.ObjectMeta), Kind: "StatefulSet", Name: s.Name, UID: s.UID})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pool != out[j].Pool {
			return out[i].Pool < out[j].Pool
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Check reports why yas cannot take over yad's workloads without replacing a pod, or nil. pools is the
// complete list of NodePools; live the workloads of the namespace. Refused:
//   - the two select different pools;
//   - for a selected pool, the YurtAppSet controller's rendering differs from the YurtAppDaemon
//     controller's in the workload selector (immutable on a Deployment), the pod template (the revision
//     label left out) or another workload field;
//   - a live workload of the YurtAppDaemon that the YurtAppSet controller, once it has adopted it, would
//     give a new pod template (for instance one still running yurt-app-manager's rendering, which the
//     YurtAppDaemon keeps until its template changes), delete, or cannot render; two workloads for a pool.
func Check(yad *v1alpha1.YurtAppDaemon, yas *v1beta1.YurtAppSet, pools []*v1alpha1.NodePool, live Workloads) error {
	var problems []string
	yadPools, err := yadpolicy.SelectPools(yad, pools)
	if err != nil {
		return err
	}
	yasPools, missing, err := yaspolicy.SelectPools(yas, pools)
	if err != nil {
		return err
	}
	if a, b := poolNames(yadPools), poolNames(yasPools); a != b || len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("the YurtAppDaemon selects pools [%s], the YurtAppSet [%s]", a, b))
	}
	yadRev, yasRev := yadpolicy.RevisionName(yad), yaspolicy.RevisionName(yas)
	for _, pool := range yadPools {
		if p := comparePool(yad, yas, pool, yadRev, yasRev); p != "" {
			problems = append(problems, fmt.Sprintf("pool %s: %s", pool.Name, p))
		}
	}
	if len(problems) == 0 {
		problems = append(problems, checkLive(yad, yas, pools, live)...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("YurtAppDaemon %s/%s cannot become a YurtAppSet without replacing pods:\n  - %s",
			yad.Namespace, yad.Name, strings.Join(problems, "\n  - "))
	}
	return nil
}

func comparePool(yad *v1alpha1.YurtAppDaemon, yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, yadRev, yasRev string) string {
	if yad.Spec.WorkloadTemplate.DeploymentTemplate != nil {
		a, err := yadpolicy.RenderDeployment(yad, pool, yadRev)
		if err != nil {
			return "the YurtAppDaemon cannot render it: " + err.Error()
		}
		b, err := yaspolicy.RenderDeployment(yas, pool, yasRev)
		if err != nil {
			return "the YurtAppSet cannot render it: " + err.Error()
		}
		return compareWorkloads(a.Spec.Selector, b.Spec.Selector, &a.Spec.Template, &b.Spec.Template,
			withoutPods(a.Spec), withoutPods(b.Spec))
	}
	a, err := yadpolicy.RenderStatefulSet(yad, pool, yadRev)
	if err != nil {
		return "the YurtAppDaemon cannot render it: " + err.Error()
	}
	b, err := yaspolicy.RenderStatefulSet(yas, pool, yasRev)
	if err != nil {
		return "the YurtAppSet cannot render it: " + err.Error()
	}
	return compareWorkloads(a.Spec.Selector, b.Spec.Selector, &a.Spec.Template, &b.Spec.Template,
		withoutPodsS(a.Spec), withoutPodsS(b.Spec))
}

func compareWorkloads(selA, selB *metav1.LabelSelector, podA, podB *corev1.PodTemplateSpec, restA, restB any) string {
	if !equality.Semantic.DeepEqual(selA, selB) {
		return fmt.Sprintf("the workload selectors differ (%s vs %s), and a selector cannot be changed",
			metav1.FormatLabelSelector(selA), metav1.FormatLabelSelector(selB))
	}
	a, b := podA.DeepCopy(), podB.DeepCopy()
	delete(a.Labels, openyurt.RevisionHashLabel)
	delete(b.Labels, openyurt.RevisionHashLabel)
	if !equality.Semantic.DeepEqual(a, b) {
		return "the pod templates differ"
	}
	if !equality.Semantic.DeepEqual(restA, restB) {
		return "the workload specs differ outside the pod template"
	}
	return ""
}

// checkLive plans the YurtAppSet over the live workloads as if it had adopted the YurtAppDaemon's.
func checkLive(yad *v1alpha1.YurtAppDaemon, yas *v1beta1.YurtAppSet, pools []*v1alpha1.NodePool, live Workloads) []string {
	sim := yas.DeepCopy()
	sim.UID = types.UID("yurtconvert-check")
	ref := *metav1.NewControllerRef(sim, yaspolicy.ControllerKind)
	children := map[types.UID]bool{}
	for _, h := range Children(yad, yas.UID, live) {
		children[h.UID] = true
	}
	adopt := func(meta *metav1.ObjectMeta) {
		meta.OwnerReferences = []metav1.OwnerReference{ref}
		meta.Labels = copyMap(meta.Labels)
		meta.Labels[openyurt.YurtAppSetOwnerLabel] = yas.Name
	}
	var deployments []*appsv1.Deployment
	for _, d := range live.Deployments {
		if children[d.UID] {
			d = d.DeepCopy()
			adopt(&d.ObjectMeta)
			deployments = append(deployments, d)
		}
	}
	var statefulSets []*appsv1.StatefulSet
	for _, s := range live.StatefulSets {
		if children[s.UID] {
			s = s.DeepCopy()
			adopt(&s.ObjectMeta)
			statefulSets = append(statefulSets, s)
		}
	}
	plan, err := yaspolicy.ComputePlan(sim, yaspolicy.RevisionName(sim), pools, deployments, statefulSets)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, u := range plan.Updates {
		if !u.PodsKept {
			problems = append(problems, fmt.Sprintf("%s %s (pool %s): its pod template is not what the YurtAppSet renders, so its pods would be replaced; "+
				"change the YurtAppDaemon's template once (its controller then renders every pool) and convert after that rollout", u.Kind, u.Name, u.Pool))
		}
	}
	for _, d := range plan.Deletes {
		problems = append(problems, fmt.Sprintf("%s %s (pool %q) would be deleted by the YurtAppSet (%s)", d.Kind, d.Name, d.Pool, d.Reason))
	}
	for _, e := range plan.PoolErrors {
		problems = append(problems, fmt.Sprintf("pool %s: %s", e.Pool, e.Message))
	}
	return problems
}

// selectedCount is the number of pools the YurtAppDaemon selects.
func selectedCount(yad *v1alpha1.YurtAppDaemon, pools []*v1alpha1.NodePool) int {
	selected, _ := yadpolicy.SelectPools(yad, pools)
	return len(selected)
}

func poolNames(pools []*v1alpha1.NodePool) string {
	names := make([]string, 0, len(pools))
	for _, p := range pools {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

func withoutPods(s appsv1.DeploymentSpec) appsv1.DeploymentSpec {
	s.Template, s.Selector = corev1.PodTemplateSpec{}, nil
	return s
}

func withoutPodsS(s appsv1.StatefulSetSpec) appsv1.StatefulSetSpec {
	s.Template, s.Selector = corev1.PodTemplateSpec{}, nil
	return s
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
