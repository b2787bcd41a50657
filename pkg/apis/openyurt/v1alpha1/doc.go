// +k8s:openapi-gen=true
// +k8s:deepcopy-gen=package
// +k8s:protobuf-gen=package
// +k8s:conversion-gen=github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt
// +k8s:defaulter-gen=TypeMeta
// +groupName=apps.openyurt.io
// +groupGoName=OpenYurtApps
// +k8s:openapi-model-package=io.openyurt.apps.v1alpha1

// Package v1alpha1 is version v1alpha1 of the apps.openyurt.io API group: YurtAppDaemon and NodePool.
package v1alpha1
