package policy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	tapppolicy "github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// AdoptedTemplateAnnotation on a child records that its pod template was rendered by the original
// controller (yurt-app-manager, or yurt-manager up to OpenYurt v1.6) and was recognised by its content as
// the rendering of the revision named in the value. Such a child is at that revision without carrying it in
// its pod template labels: the pod template is kept as it is (rewriting it would replace every pod) until
// the revision changes, the pool's placement changes or its containers are edited.
const AdoptedTemplateAnnotation = "apps.openyurt.io/adopted-template-revision"

// UpdateRevisionRecorded: the child's pod template is the original controller's rendering of the current
// template (RunsOriginalRendering); only the child's metadata is updated (RevisionHashLabel,
// PlacementHashAnnotation, AdoptedTemplateAnnotation), the pod template is left as it is.
const UpdateRevisionRecorded UpdateReason = "RevisionRecorded"

// OriginalPodTemplate returns the pod template that the original controller (yurt-app-manager, and
// yurt-manager's YurtAppDaemon controller up to OpenYurt v1.6) renders for pool from the current workload
// template, without its revision label (the original's revision hash is not reproduced; the revision label
// is not compared):
//   - labels: the template's plus PoolNameLabel=<pool>;
//   - nodeSelector replaced by {NodePoolLabel: <pool>};
//   - required node affinity removed (other affinity kept);
//   - tolerations: the template's, then {key, operator Exists, effect} for every taint of the pool, in the
//     pool's order, without looking at what the template already tolerates.
func OriginalPodTemplate(yad *v1alpha1.YurtAppDaemon, pool *v1alpha1.NodePool) (*corev1.PodTemplateSpec, error) {
	var src *corev1.PodTemplateSpec
	switch t := &yad.Spec.WorkloadTemplate; {
	case t.DeploymentTemplate != nil:
		src = &t.DeploymentTemplate.Spec.Template
	case t.StatefulSetTemplate != nil:
		src = &t.StatefulSetTemplate.Spec.Template
	default:
		return nil, fmt.Errorf("YurtAppDaemon %s/%s has no workload template", yad.Namespace, yad.Name)
	}
	out := src.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	delete(out.Labels, RevisionHashLabel)
	out.Labels[PoolNameLabel] = pool.Name
	out.Spec.NodeSelector = map[string]string{NodePoolLabel: pool.Name}
	if a := out.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
	}
	for _, taint := range pool.Spec.Taints {
		out.Spec.Tolerations = append(out.Spec.Tolerations, corev1.Toleration{
			Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: taint.Effect})
	}
	return out, nil
}

// RunsOriginalRendering reports whether have, the pod template of a live workload, is want (an
// OriginalPodTemplate): the pods it made run the current template and need not be replaced. It returns the
// first difference otherwise. Compared:
//   - labels exactly, except RevisionHashLabel (the original's value is its own hash);
//   - the annotations want has, with equal values (others, such as kubectl's restartedAt, are kept);
//   - nodeSelector, affinity and tolerations exactly (the API server defaults none of them), and the names of
//     the containers, init containers and volumes, in order;
//   - every other field want sets, as the TApp controller judges the pods of tkestack/tapp
//     (tapppolicy.CompareToTemplate): fields want leaves empty may hold the API server's defaults; a
//     different image is a difference.
func RunsOriginalRendering(want, have *corev1.PodTemplateSpec) (bool, string) {
	if !equalExcept(want.Labels, have.Labels, RevisionHashLabel) {
		return false, "metadata.labels differ"
	}
	for k, v := range want.Annotations {
		if have.Annotations[k] != v {
			return false, fmt.Sprintf("metadata.annotations[%s] differs", k)
		}
	}
	w, h := &want.Spec, &have.Spec
	switch {
	case !equality.Semantic.DeepEqual(emptyNil(w.NodeSelector), emptyNil(h.NodeSelector)):
		return false, "spec.nodeSelector differs"
	case !equality.Semantic.DeepEqual(w.Affinity, h.Affinity):
		return false, "spec.affinity differs"
	case !equality.Semantic.DeepEqual(tolerationsOrNil(w.Tolerations), tolerationsOrNil(h.Tolerations)):
		return false, "spec.tolerations differ"
	case !sameNames(containerNames(w.Containers), containerNames(h.Containers)):
		return false, "spec.containers differ"
	case !sameNames(containerNames(w.InitContainers), containerNames(h.InitContainers)):
		return false, "spec.initContainers differ"
	case !sameNames(volumeNames(w.Volumes), volumeNames(h.Volumes)):
		return false, "spec.volumes differ"
	}
	if match, reason := tapppolicy.CompareToTemplate(w, h); match != tapppolicy.RunsTemplate {
		if reason == "" {
			reason = "container images differ"
		}
		return false, reason
	}
	return true, ""
}

// recordOriginal returns the metadata-only Update of a kept child whose pod template is not this
// controller's rendering of revision but is the original controller's rendering of the current template,
// or nil. The update keeps the pod template (and the fields the API server does not allow to change) and
// takes the rest from desired: the child's metadata then says revision, and no pod is replaced.
func recordOriginal(yad *v1alpha1.YurtAppDaemon, pool *v1alpha1.NodePool, live, desired *child, revision string) *Update {
	if live.pod.Labels[RevisionHashLabel] == revision || live.meta.Annotations[AdoptedTemplateAnnotation] == revision {
		return nil
	}
	want, err := OriginalPodTemplate(yad, pool)
	if err != nil {
		return nil
	}
	if ok, _ := RunsOriginalRendering(want, live.pod); !ok {
		return nil
	}
	u := buildUpdate(pool.Name, live, desired, []UpdateReason{UpdateRevisionRecorded})
	keep := func(meta *metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec) {
		meta.Annotations[AdoptedTemplateAnnotation] = revision
		*tmpl = *live.pod.DeepCopy()
	}
	if u.Deployment != nil {
		keep(&u.Deployment.ObjectMeta, &u.Deployment.Spec.Template)
	} else {
		keep(&u.StatefulSet.ObjectMeta, &u.StatefulSet.Spec.Template)
	}
	return &u
}

// keepsAdoptedTemplate reports whether an update of a child whose pod template was recorded as the
// original's rendering of revision can keep that pod template: none of the reasons needs a new one.
func keepsAdoptedTemplate(live *child, revision string, reasons []UpdateReason) bool {
	if live.meta.Annotations[AdoptedTemplateAnnotation] != revision || live.pod.Labels[RevisionHashLabel] == revision {
		return false
	}
	for _, r := range reasons {
		if r != UpdateReplicas && r != UpdateMetadata {
			return false
		}
	}
	return true
}

func equalExcept(a, b map[string]string, skip string) bool {
	count := func(m map[string]string) int {
		n := len(m)
		if _, ok := m[skip]; ok {
			n--
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for k, v := range a {
		if k == skip {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func tolerationsOrNil(t []corev1.Toleration) []corev1.Toleration {
	if len(t) == 0 {
		return nil
	}
	return t
}

func containerNames(cs []corev1.Container) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func volumeNames(vs []corev1.Volume) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
