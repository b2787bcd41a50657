// +k8s:openapi-gen=true
// +k8s:deepcopy-gen=package
// +k8s:protobuf-gen=package
// +k8s:conversion-gen=github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt
// +k8s:defaulter-gen=TypeMeta
// +groupName=apps.openyurt.io
// +groupGoName=OpenYurtApps
// +k8s:openapi-model-package=io.openyurt.apps.v1beta1

// Package v1beta1 is version v1beta1 of the apps.openyurt.io API group: NodePool, with the fields of
// yurt-app-manager's and OpenYurt's v1beta1 (spec.hostNetwork; the fields of v1beta2 ride in annotations),
// and YurtAppSet, with the fields of OpenYurt's v1beta1. NodePools are stored as v1beta2 and converted through
// the internal type; YurtAppSets exist in this version only and are stored in it.
package v1beta1
