// +k8s:openapi-gen=true
// +k8s:deepcopy-gen=package
// +k8s:protobuf-gen=package
// +k8s:conversion-gen=github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack
// +k8s:defaulter-gen=TypeMeta
// +groupName=apps.tkestack.io
// +groupGoName=TKEStackApps
// +k8s:openapi-model-package=io.tkestack.apps.v1

// Package v1 is version v1 of the apps.tkestack.io API group, wire compatible with the original TApp CRD.
package v1
