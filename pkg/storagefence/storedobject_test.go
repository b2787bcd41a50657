package storagefence_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

// The kind and uid of a stored object are read from what the server stores in each storage media type: JSON
// (earlier versions) and protobuf.
func TestDecodeStoredObjectInEveryMediaType(t *testing.T) {
	tapp := &tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "uid-1"}}
	tapp.Spec.Replicas = 2
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(mediaType, func(t *testing.T) {
			codec, err := apiserver.StorageCodec(mediaType)
			if err != nil {
				t.Fatal(err)
			}
			value, err := runtime.Encode(codec, tapp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := storagefence.DecodeStoredObject(value)
			if err != nil {
				t.Fatal(err)
			}
			want := storagefence.StoredObject{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", UID: "uid-1"}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
	if _, err := storagefence.DecodeStoredObject([]byte("not an object")); err == nil {
		t.Errorf("garbage decoded without an error")
	}
}
