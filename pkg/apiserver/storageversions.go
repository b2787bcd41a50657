package apiserver

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// KindStorageVersions chooses, kind by kind, the version an object is stored in. A group's kinds need not share
// one: a kind is stored in the version its table entry names, and a kind the table lacks (a List, an option
// type) in its group's default version.
type KindStorageVersions struct {
	// Kinds maps a group and kind to the version its objects are stored in.
	Kinds map[schema.GroupKind]string
	// Groups maps a group to the version of its kinds that Kinds lacks.
	Groups map[string]string
}

// StorageVersions are the versions objects are stored in. Changing a kind's entry changes what the next write
// of each object stores; objects stored in the former version are read as they are (docs/storage.md).
var StorageVersions = KindStorageVersions{
	Kinds: map[schema.GroupKind]string{
		{Group: tkestackv1.GroupName, Kind: "TApp"}:                "v1",
		{Group: openyurtv1alpha1.GroupName, Kind: "YurtAppDaemon"}: "v1alpha1",
		{Group: openyurtv1alpha1.GroupName, Kind: "NodePool"}:      "v1beta2",
		{Group: openyurtv1alpha1.GroupName, Kind: "YurtAppSet"}:    "v1beta1",
	},
	Groups: map[string]string{
		tkestackv1.GroupName:       tkestackv1.SchemeGroupVersion.Version,
		openyurtv1alpha1.GroupName: openyurtv1alpha1.SchemeGroupVersion.Version,
	},
}

// KindForGroupVersionKinds returns the storage version of the first kind of kinds whose group the table knows
// (runtime.GroupVersioner).
func (s KindStorageVersions) KindForGroupVersionKinds(kinds []schema.GroupVersionKind) (schema.GroupVersionKind, bool) {
	for _, gvk := range kinds {
		if version, ok := s.Kinds[gvk.GroupKind()]; ok {
			return gvk.GroupKind().WithVersion(version), true
		}
	}
	for _, gvk := range kinds {
		if version, ok := s.Groups[gvk.Group]; ok {
			return gvk.GroupKind().WithVersion(version), true
		}
	}
	return schema.GroupVersionKind{}, false
}

// Identifier names the table for encoders' caches: equal tables give equal identifiers.
func (s KindStorageVersions) Identifier() string {
	var parts []string
	for gk, v := range s.Kinds {
		parts = append(parts, gk.String()+"="+v)
	}
	for g, v := range s.Groups {
		parts = append(parts, g+"="+v)
	}
	sort.Strings(parts)
	return "kindstorageversions:" + strings.Join(parts, ",")
}

// For returns the version objects of group and kind are stored in.
func (s KindStorageVersions) For(gk schema.GroupKind) schema.GroupVersion {
	gvk, _ := s.KindForGroupVersionKinds([]schema.GroupVersionKind{gk.WithVersion("")})
	return gvk.GroupVersion()
}

var _ runtime.GroupVersioner = KindStorageVersions{}
