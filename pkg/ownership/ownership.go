// Package ownership decides which objects a controller adopts and releases, with the semantics of the
// built-in controllers' ControllerRefManager (ReplicaSet, StatefulSet, DaemonSet), and builds the patches
// that carry those decisions out.
//
// Decide is pure: given the owner (its UID, its selector, whether it is being deleted, and which object
// names belong to it) and one object, it returns Keep, Adopt, Release, Conflict or Ignore. AdoptPatch and
// ReleasePatch are strategic merge patches bound to the object's UID: they add or remove only the owner's
// reference and fail with 422 Invalid (Gone reports it) if the object was replaced by another of the same
// name. Recheck reads the owner once from the API server, not from a cache, before the first adoption of a
// sync, so that an owner whose deletion has begun adopts nothing (RecheckDeletionTimestamp). OwnerOf builds
// the Owner of an object and its selector; ControllerOf finds the controller reference of a kind, matched by
// group and kind as the users of metav1.GetControllerOf match it.
package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Decision is what the owner should do with one object.
type Decision string

// Decisions.
const (
	// Ignore: the object is not the owner's and the owner does not want it (no controller, but it does not
	// match, or the owner or the object is being deleted).
	Ignore Decision = "Ignore"
	// Keep: the owner controls the object and still wants it.
	Keep Decision = "Keep"
	// Adopt: the object has no controller, matches the selector and carries a name of the owner; the owner
	// adds its controller reference (AdoptPatch).
	Adopt Decision = "Adopt"
	// Release: the owner controls the object but the selector no longer matches it; the owner removes its
	// reference (ReleasePatch).
	Release Decision = "Release"
	// Conflict: the object carries a name of the owner but another object controls it. It is never touched.
	Conflict Decision = "Conflict"
)

// Owner is what Decide needs to know of the owning object.
type Owner struct {
	// Namespace of the owner; objects of other namespaces are ignored.
	Namespace string
	// UID of the owner.
	UID types.UID
	// Selector is the owner's label selector. nil, or a selector that selects nothing, adopts nothing and
	// releases nothing: a selector that cannot be evaluated must not release every object.
	Selector labels.Selector
	// Deleting is true when the owner has a deletion timestamp: it adopts and releases nothing (the garbage
	// collector is about to take its objects).
	Deleting bool
	// Belongs reports whether the object's identity (name, identity labels) is one the owner would give
	// its own objects, for example an instance pod name; only such orphans are adopted. nil means any name.
	Belongs func(metav1.Object) bool
}

// OwnerOf returns the Owner of object owner whose spec.selector is selector: a selector that cannot be
// parsed is nil (the owner adopts and releases nothing), and owner is Deleting once it has a deletion
// timestamp.
func OwnerOf(owner metav1.Object, selector *metav1.LabelSelector, belongs func(metav1.Object) bool) Owner {
	var sel labels.Selector
	if selector != nil {
		if s, err := metav1.LabelSelectorAsSelector(selector); err == nil {
			sel = s
		}
	}
	return Owner{Namespace: owner.GetNamespace(), UID: owner.GetUID(), Selector: sel,
		Deleting: owner.GetDeletionTimestamp() != nil, Belongs: belongs}
}

// Decide returns what owner should do with obj:
//   - controlled by owner: Release if the selector no longer matches it and owner is not being deleted,
//     else Keep (an object the owner keeps but whose name does not belong to it, such as a pod above the
//     replica count, stays the owner's to delete);
//   - controlled by another object: Conflict if Belongs(obj), else Ignore;
//   - no controller: Adopt if the owner is not being deleted, obj is not being deleted, is in the owner's
//     namespace, matches the selector and Belongs(obj); Conflict if it Belongs but cannot be adopted (the
//     selector does not match, or it is being deleted: it still holds the name); else Ignore.
func Decide(owner Owner, obj metav1.Object) Decision {
	if owner.Namespace != "" && obj.GetNamespace() != owner.Namespace {
		return Ignore
	}
	belongs := owner.Belongs == nil || owner.Belongs(obj)
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if ref.UID != owner.UID {
			if belongs {
				return Conflict
			}
			return Ignore
		}
		if owner.Deleting || !selects(owner.Selector) || owner.Selector.Matches(labels.Set(obj.GetLabels())) {
			return Keep
		}
		return Release
	}
	if !belongs {
		return Ignore
	}
	if owner.Deleting || obj.GetDeletionTimestamp() != nil || !selects(owner.Selector) ||
		!owner.Selector.Matches(labels.Set(obj.GetLabels())) {
		return Conflict
	}
	return Adopt
}

// selects reports whether s can select anything.
func selects(s labels.Selector) bool {
	if s == nil || s.Empty() {
		return false
	}
	_, selectable := s.Requirements()
	return selectable
}

// ControllerRef returns the controller reference of an owner: controller and blockOwnerDeletion set.
func ControllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}
}

// ControllerOf returns the controller reference of obj when it names an object of group kind gk, whatever
// its version, nil otherwise. References are matched by group and kind, as the users of
// metav1.GetControllerOf do: a reference written through any served version names the same object, which
// the caller then identifies by name and UID. The reference is obj's own: read only.
func ControllerOf(obj metav1.Object, gk schema.GroupKind) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != gk.Kind {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != gk.Group {
		return nil
	}
	return ref
}

// AdoptPatch returns the strategic merge patch that adds ref to the ownerReferences of the object whose
// UID is objUID. Owner references merge by UID, so the object's other references are kept. The patch
// carries metadata.uid: the API server refuses it (422) if the object of that name has another UID, and it
// refuses a second controller reference, so an object another controller adopted meanwhile is not taken.
func AdoptPatch(ref metav1.OwnerReference, objUID types.UID) ([]byte, error) {
	if objUID == "" || ref.UID == "" {
		return nil, errors.New("adoption patch needs the object's and the owner's UID")
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{
			"ownerReferences": []metav1.OwnerReference{ref},
			"uid":             objUID,
		},
	})
}

// ReleasePatch returns the strategic merge patch that removes the reference to ownerUID, and only that one,
// from the object whose UID is objUID (bound to it like AdoptPatch).
func ReleasePatch(ownerUID, objUID types.UID) ([]byte, error) {
	if objUID == "" || ownerUID == "" {
		return nil, errors.New("release patch needs the object's and the owner's UID")
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{
			"ownerReferences": []map[string]any{{"$patch": "delete", "uid": ownerUID}},
			"uid":             objUID,
		},
	})
}

// Gone reports whether an adoption or release patch failed because the object no longer exists: it was
// deleted (404), or replaced by another object of the same name (422 on metadata.uid). Such objects are
// decided again from the next snapshot.
func Gone(err error) bool {
	return apierrors.IsNotFound(err) || UIDRefused(err)
}

// UIDRefused reports whether err is the API server's refusal of a patch whose metadata.uid precondition is
// not the object's: the object was replaced by another of the same name.
func UIDRefused(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// ErrOwnerDeleting is returned by a Recheck when the owner is gone, replaced, or being deleted.
var ErrOwnerDeleting = errors.New("owner is being deleted")

// Recheck returns a function to call before every adoption of one sync. The first call reads the owner
// with get, which must read from the API server (not from an informer cache, which may not show a deletion
// that has begun), and returns an error wrapping ErrOwnerDeleting if it is gone, has another UID than uid
// or has a deletion timestamp; later calls return the first result without reading again. It is safe for
// concurrent use.
func Recheck(uid types.UID, get func(context.Context) (metav1.Object, error)) func(context.Context) error {
	var once sync.Once
	var result error
	return func(ctx context.Context) error {
		once.Do(func() {
			fresh, err := get(ctx)
			switch {
			case apierrors.IsNotFound(err):
				result = fmt.Errorf("%w: it no longer exists", ErrOwnerDeleting)
			case err != nil:
				result = fmt.Errorf("re-reading the owner before adopting: %w", err)
			case fresh.GetUID() != uid:
				result = fmt.Errorf("%w: it was replaced (uid %s, expected %s)", ErrOwnerDeleting, fresh.GetUID(), uid)
			case fresh.GetDeletionTimestamp() != nil:
				result = fmt.Errorf("%w since %s", ErrOwnerDeleting, fresh.GetDeletionTimestamp().UTC().Format("15:04:05"))
			}
		})
		return result
	}
}
