// +k8s:openapi-gen=true
// +k8s:deepcopy-gen=package
// +k8s:protobuf-gen=package
// +k8s:conversion-gen=github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt
// +k8s:defaulter-gen=TypeMeta
// +groupName=apps.openyurt.io
// +groupGoName=OpenYurtApps
// +k8s:openapi-model-package=io.openyurt.apps.v1beta2

// Package v1beta2 is version v1beta2 of the apps.openyurt.io API group: NodePool only, with the fields of
// OpenYurt's v1beta2 (interConnectivity, pool leaders, poolScopeMetadata) and spec.selector of the older
// versions. It is the group's preferred version, and the version NodePools are stored in.
package v1beta2
