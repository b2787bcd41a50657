package tapppod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// Owner is what the pods of a TApp take from the TApp besides their template.
type Owner struct {
	// Name, Namespace and UID of the TApp. The owner reference is left out when UID is empty.
	Name      string
	Namespace string
	UID       types.UID
	// ServiceName is spec.serviceName: when set, every pod gets hostname <tapp>-<id> and this subdomain.
	ServiceName string
	// VolumeClaimTemplates is spec.volumeClaimTemplates: every pod mounts its claim of each.
	VolumeClaimTemplates []corev1.PersistentVolumeClaim
	// Spread, when set, gives a pod whose template has no topologySpreadConstraints the default spread
	// constraints (SpreadConstraints). They are not part of the template, nor of its hashes.
	Spread *Spread
}

// Name returns the name of the pod of instance id of TApp tapp: <tapp>-<id>.
func Name(tapp, id string) string {
	return tapp + "-" + id
}

// ClaimName returns the name of the claim of instance id of TApp tapp for the claim template claim:
// <claim>-<tapp>-<id>.
func ClaimName(claim, tapp, id string) string {
	return claim + "-" + tapp + "-" + id
}

// ParseID returns the ordinal of a canonical instance id ("0", "1", ... without sign or leading zeros).
func ParseID(id string) (int, bool) {
	n, err := strconv.Atoi(id)
	if err != nil || n < 0 || strconv.Itoa(n) != id {
		return 0, false
	}
	return n, true
}

// OwnerReference returns the controller reference a TApp puts on its pods.
func OwnerReference(name string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         tkestackv1.SchemeGroupVersion.String(),
		Kind:               "TApp",
		Name:               name,
		UID:                uid,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// Template is a pod template with what its pods take from it computed once (the hashes, the record of its
// keys), so that building the pods of many instances hashes it once (Template.New).
type Template struct {
	// Spec is the template, read only.
	Spec *corev1.PodTemplateSpec
	// TemplateHash and UniqHash are the values of the hash labels (TemplateHash, UniqHash of Spec);
	// ResizeHash is the value of ResizeHashLabel (ResizeHash of Spec).
	TemplateHash, UniqHash, ResizeHash string
	// Keys is the TemplateKeysAnnotation value (TemplateKeysValue of Spec).
	Keys string
}

// Prepare returns template t with its hashes and keys computed. It keeps t, which must not change while
// the Template is used.
func Prepare(t *corev1.PodTemplateSpec) *Template {
	return &Template{Spec: t, TemplateHash: TemplateHash(t), UniqHash: UniqHash(t), ResizeHash: ResizeHash(t), Keys: TemplateKeysValue(t)}
}

// Labels returns the labels an instance's pod has when it runs template t: the template labels plus the
// instance label and the three hash labels.
func Labels(t *corev1.PodTemplateSpec, id string) map[string]string {
	return labels(t, id, TemplateHash(t), UniqHash(t), ResizeHash(t))
}

// Labels is the package's Labels, with the hashes computed by Prepare.
func (t *Template) Labels(id string) map[string]string {
	return labels(t.Spec, id, t.TemplateHash, t.UniqHash, t.ResizeHash)
}

func labels(t *corev1.PodTemplateSpec, id, templateHash, uniqHash, resizeHash string) map[string]string {
	labels := make(map[string]string, len(t.Labels)+4)
	for k, v := range t.Labels {
		labels[k] = v
	}
	labels[tkestack.InstanceIDLabel] = id
	labels[tkestack.TemplateHashLabel] = templateHash
	labels[tkestack.UniqHashLabel] = uniqHash
	labels[ResizeHashLabel] = resizeHash
	return labels
}

// New returns the pod of instance id of owner built from template t (Template.New, for one pod).
func New(owner Owner, id string, t *corev1.PodTemplateSpec) *corev1.Pod {
	return Prepare(t).New(owner, id)
}

// New returns the pod of instance id of owner, built from the template:
//   - name <tapp>-<id> in the TApp's namespace;
//   - labels: template labels + tapp_instance_key=id + the template, uniq and resize hash labels;
//   - annotations and finalizers from the template, plus TemplateKeysAnnotation;
//   - a controller ownerReference to the TApp (blockOwnerDeletion true);
//   - the template spec, with the readiness gate tkestack.io/InPlaceUpdate appended if absent;
//   - hostname <tapp>-<id> and subdomain spec.serviceName when serviceName is set;
//   - the constraints of owner.Spread when set and the template has no topologySpreadConstraints;
//   - for every volumeClaimTemplate a volume named after the claim that mounts the claim <claim>-<tapp>-<id>;
//     it replaces a template volume of the same name, else it is appended.
//
// The pod shares nothing with the template or owner. The template is not hashed again.
func (tmpl *Template) New(owner Owner, id string) *corev1.Pod {
	t := tmpl.Spec.DeepCopy()
	name := Name(owner.Name, id)
	annotations := make(map[string]string, len(t.Annotations)+1)
	for k, v := range t.Annotations {
		annotations[k] = v
	}
	annotations[TemplateKeysAnnotation] = tmpl.Keys
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   owner.Namespace,
			Labels:      labels(t, id, tmpl.TemplateHash, tmpl.UniqHash, tmpl.ResizeHash),
			Annotations: annotations,
			Finalizers:  t.Finalizers,
		},
		Spec: t.Spec,
	}
	if owner.UID != "" {
		pod.OwnerReferences = []metav1.OwnerReference{OwnerReference(owner.Name, owner.UID)}
	}
	inplace.AddReadinessGate(&pod.Spec)
	if owner.ServiceName != "" {
		pod.Spec.Hostname = name
		pod.Spec.Subdomain = owner.ServiceName
	}
	addSpread(&pod.Spec, owner.Spread)
	for _, claim := range owner.VolumeClaimTemplates {
		vol := corev1.Volume{
			Name: claim.Name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: ClaimName(claim.Name, owner.Name, id),
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
	return pod
}
