package tapp

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackinstall "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/install"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

func testPodTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: image}},
		},
	}
}

// validTApp returns a defaulted TApp that passes validation.
func validTApp() *tkestack.TApp {
	return &tkestack.TApp{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "5", Generation: 3,
			Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "a"},
		},
		Spec: tkestack.TAppSpec{
			Replicas:            2,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template:            ptr.To(testPodTemplate("nginx:1")),
			TemplatePool:        map[string]corev1.PodTemplateSpec{"canary": testPodTemplate("nginx:2")},
			DefaultTemplateName: tkestack.DefaultTemplateName,
		},
		Status: tkestack.TAppStatus{
			ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 1, ScaleLabelSelector: "app=x",
			AppStatus: tkestack.AppRunning,
		},
	}
}

// testEnv is what the server gives request-path steps, with a scheme of TApps.
func testEnv() requestpath.Env {
	scheme := runtime.NewScheme()
	tkestackinstall.Install(scheme)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Version: "v1"}, &metav1.Status{})
	return requestpath.Env{Scheme: scheme, Codecs: serializer.NewCodecFactory(scheme), MaxBody: requestpath.DefaultMaxBody}
}
