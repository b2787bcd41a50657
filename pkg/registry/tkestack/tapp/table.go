package tapp

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

// tableConvertor prints TApps for kubectl get: NAME DESIRED CURRENT READY APPSTATUS AGE, and with -o wide
// the default template's images, the selector, the available instances and the update revision.
var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Desired", Type: "integer", Description: "spec.replicas: the desired number of instances."},
		{Name: "Current", Type: "integer", Description: "status.replicas: the number of instances that exist."},
		{Name: "Ready", Type: "integer", Description: "status.readyReplicas: the number of ready instances."},
		{Name: "AppStatus", Type: "string", Description: "status.appStatus: the state of the TApp."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images of the default template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: "The label selector of the pods."},
		{Name: "Available", Type: "integer", Priority: 1, Description: "status.availableReplicas: instances ready for at least spec.minReadySeconds."},
		{Name: "Revision", Type: "string", Priority: 1, Description: "status.updateRevision: the ControllerRevision of the current templates."},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		tapp, ok := obj.(*tkestack.TApp)
		if !ok {
			return nil, registry.ObjectTypeError("TApp", obj)
		}
		appStatus := orNone(string(tapp.Status.AppStatus))
		return []interface{}{
			int64(tapp.Spec.Replicas),
			int64(tapp.Status.Replicas),
			int64(tapp.Status.ReadyReplicas),
			appStatus,
			images(tapp, tapp.Spec.DefaultTemplateName),
			registry.SelectorString(tapp.Spec.Selector),
			int64(tapp.Status.AvailableReplicas),
			orNone(tapp.Status.UpdateRevision),
		}, nil
	},
}

// images lists the container images of a pod template, comma separated.
func images(tapp *tkestack.TApp, name string) string {
	spec := tapp.Spec.PodTemplate().Spec
	if t, ok := tapp.Spec.TemplatePool[name]; ok && name != tkestack.DefaultTemplateName {
		spec = t.Spec
	}
	out := make([]string, 0, len(spec.Containers))
	for _, c := range spec.Containers {
		out = append(out, c.Image)
	}
	return strings.Join(out, ",")
}

// orNone prints an empty value as kubectl does.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
