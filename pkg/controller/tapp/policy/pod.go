package policy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

const (
	// InPlaceUpdateGate is the readiness gate added to every pod; the in-place update engine sets the
	// condition of that type to False while it updates a pod and back to True when the update is done.
	InPlaceUpdateGate corev1.PodConditionType = tkestack.InPlaceUpdateReadinessGate

	// TemplateKeysAnnotation records, on every pod, which label and annotation keys came from its template
	// (JSON {"labels":[...],"annotations":[...]}, keys sorted). An in-place update removes the keys that were
	// in the old template and are not in the new one, and leaves keys added by anyone else alone.
	TemplateKeysAnnotation = "tkestack.io/template-keys"

	// PortMappingAnnotation (Galaxy network plugin) keeps its current pod value through in-place updates.
	PortMappingAnnotation = "tkestack.io/portmapping"
)

// PodName returns the name of the pod of instance id: <tapp>-<id>.
func PodName(tapp *tkestackv1.TApp, id string) string {
	return tapp.Name + "-" + id
}

// PVCName returns the name of the claim of instance id for the claim template claim: <claim>-<tapp>-<id>.
func PVCName(claim string, tapp *tkestackv1.TApp, id string) string {
	return claim + "-" + tapp.Name + "-" + id
}

// ParseID returns the ordinal of a canonical instance id ("0", "1", ... without sign or leading zeros).
func ParseID(id string) (int, bool) {
	n, err := strconv.Atoi(id)
	if err != nil || n < 0 || strconv.Itoa(n) != id {
		return 0, false
	}
	return n, true
}

// InstanceID returns the value of the instance label of a pod.
func InstanceID(pod *corev1.Pod) (string, bool) {
	id, ok := pod.Labels[InstanceIDLabel]
	return id, ok
}

// IsControlledBy reports whether the controller reference of obj points at the TApp (by UID).
func IsControlledBy(obj metav1.Object, tapp *tkestackv1.TApp) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == tapp.UID
}

// OwnerReference returns the controller reference the TApp puts on its pods.
func OwnerReference(tapp *tkestackv1.TApp) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         tkestackv1.SchemeGroupVersion.String(),
		Kind:               "TApp",
		Name:               tapp.Name,
		UID:                tapp.UID,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// PodLabels returns the labels an instance's pod has when it runs template t: the template labels plus the
// instance label and the two hash labels.
func PodLabels(t *corev1.PodTemplateSpec, id string) map[string]string {
	labels := make(map[string]string, len(t.Labels)+3)
	for k, v := range t.Labels {
		labels[k] = v
	}
	labels[InstanceIDLabel] = id
	labels[TemplateHashLabel] = TemplateHash(t)
	labels[UniqHashLabel] = UniqHash(t)
	return labels
}

type templateKeys struct {
	Labels      []string `json:"labels,omitempty"`
	Annotations []string `json:"annotations,omitempty"`
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// templateKeysValue is the TemplateKeysAnnotation value for template t. The instance and hash labels are
// always managed and not listed.
func templateKeysValue(t *corev1.PodTemplateSpec) string {
	keys := templateKeys{Labels: sortedKeys(t.Labels)}
	for _, k := range sortedKeys(t.Annotations) {
		if k != TemplateKeysAnnotation {
			keys.Annotations = append(keys.Annotations, k)
		}
	}
	var labels []string
	for _, k := range keys.Labels {
		if k != InstanceIDLabel && k != TemplateHashLabel && k != UniqHashLabel {
			labels = append(labels, k)
		}
	}
	keys.Labels = labels
	data, _ := json.Marshal(keys)
	return string(data)
}

// recordedTemplateKeys reads TemplateKeysAnnotation from a pod; pods without it (created by the original
// controller) have no recorded keys, so nothing is removed from them.
func recordedTemplateKeys(pod *corev1.Pod) templateKeys {
	var keys templateKeys
	if v, ok := pod.Annotations[TemplateKeysAnnotation]; ok {
		_ = json.Unmarshal([]byte(v), &keys)
	}
	return keys
}

// NewPod returns the pod of instance id, built from the instance's template:
//   - name <tapp>-<id> in the TApp's namespace;
//   - labels: template labels + tapp_instance_key=id + the template and uniq hash labels;
//   - annotations and finalizers from the template, plus TemplateKeysAnnotation;
//   - a controller ownerReference to the TApp (blockOwnerDeletion true);
//   - the template spec, with the readiness gate tkestack.io/InPlaceUpdate appended if absent;
//   - hostname <tapp>-<id> and subdomain spec.serviceName when serviceName is set;
//   - for every volumeClaimTemplate a volume named after the claim that mounts the claim <claim>-<tapp>-<id>;
//     it replaces a template volume of the same name, else it is appended.
func NewPod(tapp *tkestackv1.TApp, id string) (*corev1.Pod, error) {
	_, t, err := templateForID(tapp, id)
	if err != nil {
		return nil, err
	}
	name := PodName(tapp, id)
	annotations := make(map[string]string, len(t.Annotations)+1)
	for k, v := range t.Annotations {
		annotations[k] = v
	}
	annotations[TemplateKeysAnnotation] = templateKeysValue(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       tapp.Namespace,
			Labels:          PodLabels(t, id),
			Annotations:     annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{OwnerReference(tapp)},
		},
		Spec: t.Spec,
	}
	inplace.AddReadinessGate(&pod.Spec)
	if tapp.Spec.ServiceName != "" {
		pod.Spec.Hostname = name
		pod.Spec.Subdomain = tapp.Spec.ServiceName
	}
	for _, claim := range tapp.Spec.VolumeClaimTemplates {
		vol := corev1.Volume{
			Name: claim.Name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: PVCName(claim.Name, tapp, id),
			}},
		}
		replaced := false
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == claim.Name {
				pod.Spec.Volumes[i] = vol
				replaced = true
			}
		}
		if !replaced {
			pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		}
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
		labels[InstanceIDLabel] = id
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
