// Package install registers the apps.openyurt.io group, internal and versioned, into a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

// Install registers the group into scheme. v1beta2 (NodePool only) is preferred, as in OpenYurt, then
// v1beta1 (NodePool and YurtAppSet); YurtAppDaemon exists in v1alpha1 only, YurtAppSet in v1beta1 only.
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(openyurt.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	utilruntime.Must(v1beta2.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(v1beta2.SchemeGroupVersion, v1beta1.SchemeGroupVersion, v1alpha1.SchemeGroupVersion))
}
