package podtemplate

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// prepareTemplate returns template templateName of tapp with its hashes computed (tapppod.Prepare), once for
// every pod built from it, and its field path: spec.template or spec.templatePool[<name>].
func prepareTemplate(tapp *tkestack.TApp, templateName string) (*tapppod.Template, *field.Path, error) {
	if templateName == tkestack.DefaultTemplateName {
		return tapppod.Prepare(tapp.Spec.PodTemplate()), field.NewPath("spec", "template"), nil
	}
	pooled, ok := tapp.Spec.TemplatePool[templateName]
	if !ok {
		return nil, nil, fmt.Errorf("template %q not found in spec.templatePool", templateName)
	}
	return tapppod.Prepare(&pooled), field.NewPath("spec", "templatePool").Key(templateName), nil
}

// buildPodFrom returns the pod of instance id of tapp built from prepared, the template at path template, and
// where its fields come from. Neither tapp nor the template is changed.
func buildPodFrom(tapp *tkestack.TApp, namespace string, prepared *tapppod.Template, template *field.Path, id string) (*corev1.Pod, *podPaths) {
	paths := &podPaths{template: template, claimVolumes: map[int]int{}}
	// Without a uid (only possible outside a real request) the pod has no owner reference, which would be
	// invalid.
	owner := tapppod.Owner{
		Name:                 tapp.Name,
		Namespace:            namespace,
		UID:                  tapp.UID,
		ServiceName:          tapp.Spec.ServiceName,
		VolumeClaimTemplates: tapp.Spec.VolumeClaimTemplates,
	}
	// The default spread of spec.spreadPolicy, in its longest form (with zones), as the controller adds it.
	if tapp.Spec.SpreadPolicy != tkestack.SpreadPolicyNone && tapp.Spec.Selector != nil {
		owner.Spread = &tapppod.Spread{Selector: tapp.Spec.Selector, Zones: true}
	}
	pod := prepared.New(owner, id)
	pod.GenerateName = tapp.Name + "-"
	pod.Name = ""

	for i, volume := range pod.Spec.Volumes {
		if volume.PersistentVolumeClaim == nil {
			continue
		}
		for j, claim := range tapp.Spec.VolumeClaimTemplates {
			if claim.Name == volume.Name && volume.PersistentVolumeClaim.ClaimName == tapppod.ClaimName(claim.Name, tapp.Name, id) {
				paths.claimVolumes[i] = j
			}
		}
	}
	return pod, paths
}

// instanceFor returns the instance id whose pod stands for the template: the lowest id assigned to it in
// spec.templates, else 0.
func instanceFor(tapp *tkestack.TApp, templateName string) string {
	best := -1
	for id, name := range tapp.Spec.Templates {
		if name != templateName {
			continue
		}
		if n, ok := tapppod.ParseID(id); ok && (best < 0 || n < best) {
			best = n
		}
	}
	if best < 0 {
		best = 0
	}
	return strconv.Itoa(best)
}

// podPaths maps field paths of the dry-run pod to the TApp fields they come from.
type podPaths struct {
	// template is the path of the template: spec.template or spec.templatePool[<name>].
	template *field.Path
	// claimVolumes maps the index of a pod volume made from a volume claim template to that template's index.
	claimVolumes map[int]int
}

// tappField returns the TApp field path of a field path of the pod.
func (p *podPaths) tappField(podField string) string {
	switch {
	case podField == "" || podField == "<nil>":
		return p.template.String()
	case podField == "metadata.name" || podField == "metadata.generateName" || podField == "spec.hostname":
		return "metadata.name"
	case podField == "metadata.namespace":
		return "metadata.namespace"
	case podField == "spec.subdomain":
		return "spec.serviceName"
	}
	if rest, ok := strings.CutPrefix(podField, "spec.volumes["); ok {
		if end := strings.IndexByte(rest, ']'); end > 0 {
			if i, err := strconv.Atoi(rest[:end]); err == nil {
				if j, ok := p.claimVolumes[i]; ok {
					return field.NewPath("spec", "volumeClaimTemplates").Index(j).String()
				}
			}
		}
	}
	return underTemplate(p.template, podField)
}

// causeErrors turns the causes of a 422 into field errors on the checked object. A 422 without causes (an
// admission policy's denial, for instance) becomes one error on the template.
func causeErrors(s metav1.Status, message string, c *templateCheck) field.ErrorList {
	var causes []metav1.StatusCause
	if s.Details != nil {
		causes = s.Details.Causes
	}
	if len(causes) == 0 {
		return field.ErrorList{field.Invalid(c.template, field.OmitValueType{}, message)}
	}
	errs := make(field.ErrorList, 0, len(causes))
	for _, cause := range causes {
		errs = append(errs, causeError(cause, c.fieldPath(cause.Field)))
	}
	return errs
}

// underTemplate is the path of field, a field path of the object made from template, inside the template.
func underTemplate(template *field.Path, podField string) string {
	if strings.HasPrefix(podField, "[") {
		return template.String() + podField
	}
	return template.String() + "." + podField
}

// causeError rebuilds the field error a cause was made from, on fieldPath: the cause's message is the error
// body "<type text>[: <detail>]", which the rebuilt error reproduces exactly.
func causeError(c metav1.StatusCause, fieldPath string) *field.Error {
	t := field.ErrorType(c.Type)
	text := t.String()
	if !strings.HasPrefix(text, "<unknown") {
		if c.Message == text {
			return &field.Error{Type: t, Field: fieldPath, BadValue: field.OmitValueType{}}
		}
		if detail, ok := strings.CutPrefix(c.Message, text+": "); ok {
			return &field.Error{Type: t, Field: fieldPath, BadValue: field.OmitValueType{}, Detail: detail}
		}
	}
	return &field.Error{Type: field.ErrorTypeInvalid, Field: fieldPath, BadValue: field.OmitValueType{}, Detail: c.Message}
}
