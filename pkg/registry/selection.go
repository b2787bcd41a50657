package registry

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ObjectMetaAttrs returns the labels and the selectable fields of an object: metadata.name, and
// metadata.namespace for namespaced resources.
func ObjectMetaAttrs(obj runtime.Object, namespaced bool) (labels.Set, fields.Set, error) {
	accessor, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, nil, fmt.Errorf("%T has no object metadata", obj)
	}
	objectMeta, ok := accessor.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return nil, nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return objectMeta.Labels, generic.ObjectMetaFieldsSet(objectMeta, namespaced), nil
}

// Matcher turns an attribute function into the label and field selection of a store.
func Matcher(attrs storage.AttrFunc) func(labels.Selector, fields.Selector) storage.SelectionPredicate {
	return func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
		return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: attrs}
	}
}

// StatusResetFields is what writes to a main resource never change: its status.
func StatusResetFields(version fieldpath.APIVersion) map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		version: fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// SpecResetFields is what writes to a status subresource never change: the spec, labels and annotations.
func SpecResetFields(version fieldpath.APIVersion) map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		version: fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
		),
	}
}
