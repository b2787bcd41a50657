// Package install registers the apps.tkestack.io group, internal and versioned, into a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	v1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// Install registers the group into scheme.
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(tkestack.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(v1.SchemeGroupVersion))
}
