package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	scalescheme "k8s.io/client-go/scale/scheme"
	scaleautoscalingv1 "k8s.io/client-go/scale/scheme/autoscalingv1"

	openyurtinstall "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/install"
	tkestackinstall "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/install"
)

var (
	// Scheme knows every type the server serves, plus the Scale types of the scale subresource.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes the types of Scheme.
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	tkestackinstall.Install(Scheme)
	openyurtinstall.Install(Scheme)
	utilruntime.Must(scalescheme.AddToScheme(Scheme))
	utilruntime.Must(scaleautoscalingv1.AddToScheme(Scheme))

	// Options and status types shared by every group, as every API server registers them.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
}

// StorageCodec encodes objects for the store in mediaType (--storage-media-type), in their group's storage
// version (StorageVersions). It decodes every media type the server ever stored (JSON, YAML, protobuf: the universal
// deserializer recognises each by its first bytes), so a store written in another media type is read as it is
// and each object is rewritten in mediaType on its next write.
func StorageCodec(mediaType string) (runtime.Codec, error) {
	info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, fmt.Errorf("no serializer for storage media type %q", mediaType)
	}
	return Codecs.CodecForVersions(info.Serializer, Codecs.UniversalDeserializer(), StorageVersions, runtime.InternalGroupVersioner), nil
}
