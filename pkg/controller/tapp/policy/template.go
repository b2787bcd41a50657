package policy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TemplateNameFor returns the name of the template instance id runs: spec.templates[id] when set, else
// spec.defaultTemplateName.
func TemplateNameFor(tapp *tkestackv1.TApp, id string) string {
	if name := tapp.Spec.Templates[id]; name != "" {
		return name
	}
	return tapp.Spec.DefaultTemplateName
}

// RollingTemplateName returns the template that rolls within updateStrategy.maxUnavailable:
// updateStrategy.template (defaulted to the default template name). Instances on any other template are
// updated within updateStrategy.forceUpdate.maxUnavailable.
func RollingTemplateName(tapp *tkestackv1.TApp) string {
	return tapp.Spec.UpdateStrategy.Template
}

// TemplateFor returns a deep copy of the template called name: spec.template for "default", else the
// templatePool entry. The caller may modify the result.
func TemplateFor(tapp *tkestackv1.TApp, name string) (*corev1.PodTemplateSpec, error) {
	if name == tkestack.DefaultTemplateName {
		return tapp.Spec.Template.DeepCopy(), nil
	}
	t, ok := tapp.Spec.TemplatePool[name]
	if !ok {
		return nil, fmt.Errorf("template %q not found in spec.templatePool of TApp %s/%s", name, tapp.Namespace, tapp.Name)
	}
	return t.DeepCopy(), nil
}
