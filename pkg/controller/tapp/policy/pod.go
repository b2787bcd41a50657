package policy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

const (
	// InPlaceUpdateGate is the readiness gate added to every pod; the in-place update engine sets the
	// condition of that type to False while it updates a pod and back to True when the update is done.
	InPlaceUpdateGate corev1.PodConditionType = tkestack.InPlaceUpdateReadinessGate

	// PortMappingAnnotation (Galaxy network plugin) keeps its current pod value through in-place updates.
	PortMappingAnnotation = "tkestack.io/portmapping"
)

// PodName returns the name of the pod of instance id: <tapp>-<id>.
func PodName(tapp *tkestackv1.TApp, id string) string {
	return tapppod.Name(tapp.Name, id)
}

// PVCName returns the name of the claim of instance id for the claim template claim: <claim>-<tapp>-<id>.
func PVCName(claim string, tapp *tkestackv1.TApp, id string) string {
	return tapppod.ClaimName(claim, tapp.Name, id)
}

// ParseID returns the ordinal of a canonical instance id ("0", "1", ... without sign or leading zeros).
func ParseID(id string) (int, bool) {
	return tapppod.ParseID(id)
}

// InstanceID returns the value of the instance label of a pod.
func InstanceID(pod *corev1.Pod) (string, bool) {
	id, ok := pod.Labels[tkestack.InstanceIDLabel]
	return id, ok
}

// IsControlledBy reports whether the controller reference of obj points at the TApp (by UID).
func IsControlledBy(obj metav1.Object, tapp *tkestackv1.TApp) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == tapp.UID
}

// OwnerReference returns the controller reference the TApp puts on its pods.
func OwnerReference(tapp *tkestackv1.TApp) metav1.OwnerReference {
	return tapppod.OwnerReference(tapp.Name, tapp.UID)
}

// PodLabels returns the labels an instance's pod has when it runs template t: the template labels plus the
// instance label and the two hash labels.
func PodLabels(t *corev1.PodTemplateSpec, id string) map[string]string {
	return tapppod.Labels(t, id)
}

// recordedTemplateKeys reads tapppod.TemplateKeysAnnotation from a pod; pods without it have no recorded keys.
func recordedTemplateKeys(pod *corev1.Pod) tapppod.TemplateKeys {
	return tapppod.RecordedTemplateKeys(pod)
}

// PodOwner returns what the TApp's pods take from it besides their template, without the default spread
// (SpreadFor): the pod a pod is compared with (CompareToTemplate). The pods the controller creates add it
// (NewPod, Plan.NewPod).
func PodOwner(tapp *tkestackv1.TApp) tapppod.Owner {
	return tapppod.Owner{
		Name:                 tapp.Name,
		Namespace:            tapp.Namespace,
		UID:                  tapp.UID,
		ServiceName:          tapp.Spec.ServiceName,
		VolumeClaimTemplates: tapp.Spec.VolumeClaimTemplates,
	}
}

// NewPod returns the pod of instance id, built by tapppod from the template the instance runs
// (TemplateNameFor), with the default spread over nodes (SpreadFor, in a cluster without zones). To build
// the pods of a plan, Plan.NewPod reuses the plan's hashed templates and knows the cluster's Topology.
func NewPod(tapp *tkestackv1.TApp, id string) (*corev1.Pod, error) {
	return newTemplateCache(tapp).newPod(id)
}

// NewPod returns the pod of instance id (one of Creates) as NewPod does, from the templates the plan
// resolved and hashed (building the pods of a sync hashes each template once), spread in the cluster's
// p.Topology (SpreadFor).
func (p *Plan) NewPod(id string) (*corev1.Pod, error) {
	if p.templates == nil {
		return nil, fmt.Errorf("instance %s: the plan was not computed by ComputePlan", id)
	}
	n, ok := ParseID(id)
	if !ok {
		return nil, fmt.Errorf("instance %s: not an instance id", id)
	}
	t := p.createTemplate(n, id)
	if t.err != nil {
		return nil, t.err
	}
	owner := PodOwner(p.tapp)
	owner.Spread = SpreadFor(p.tapp, p.Topology)
	pod := t.prepared.New(owner, id)
	if t.revision != "" {
		pod.Labels[tkestack.ControllerRevisionHashLabel] = t.revision
	}
	if p.tapp.Spec.Lifecycle != nil {
		pod.Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStateNormal
	}
	return pod, nil
}

// NewPVCs returns the claims of instance id, one per volumeClaimTemplate, in template order: name
// <claim>-<tapp>-<id>, the TApp's namespace, labels = claim template labels + spec.selector.matchLabels +
// tapp_instance_key=id, annotations and spec from the claim template.
//
// The claims have NO owner reference: like StatefulSet's default retention they are never deleted by the
// controller (not on scale-down, not on kill) and not garbage-collected with the TApp, so data survives
// until the user deletes the claims. A recreated or revived instance mounts its old claim again. Their
// tapp_instance_key label marks them as this controller's: they are never adopted (see ClaimOwner).
func NewPVCs(tapp *tkestackv1.TApp, id string) []*corev1.PersistentVolumeClaim {
	claims := make([]*corev1.PersistentVolumeClaim, 0, len(tapp.Spec.VolumeClaimTemplates))
	for i := range tapp.Spec.VolumeClaimTemplates {
		tmpl := tapp.Spec.VolumeClaimTemplates[i].DeepCopy()
		labels := map[string]string{}
		for k, v := range tmpl.Labels {
			labels[k] = v
		}
		if tapp.Spec.Selector != nil {
			for k, v := range tapp.Spec.Selector.MatchLabels {
				labels[k] = v
			}
		}
		labels[tkestack.InstanceIDLabel] = id
		claims = append(claims, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:        PVCName(tmpl.Name, tapp, id),
				Namespace:   tapp.Namespace,
				Labels:      labels,
				Annotations: tmpl.Annotations,
			},
			Spec: tmpl.Spec,
		})
	}
	return claims
}

// podDescription names a pod's controller for conflict reports.
func podDescription(pod *corev1.Pod) string {
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		return fmt.Sprintf("%s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
	}
	return "no controller"
}
