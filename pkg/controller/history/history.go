package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// MaxCollisions bounds the collisionCount increments of one Ensure.
const MaxCollisions = 5

// ControllerUIDIndex is the index AddControllerUIDIndex adds to a ControllerRevision informer: revisions by
// the UID of their controller reference. Through it Owned reads an owner's revisions alone, where the
// lister goes over every revision of the namespace: with N owners in one namespace, N syncs would cost N².
const ControllerUIDIndex = "history.controllerUID"

// AddControllerUIDIndex adds ControllerUIDIndex to a ControllerRevision informer that does not have it yet
// (the controllers sharing an informer each call it). Call it before the informer starts.
func AddControllerUIDIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[ControllerUIDIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{ControllerUIDIndex: controllerUID})
}

// controllerUID is the ControllerUIDIndex function: the UID of a revision's controller reference.
func controllerUID(obj any) ([]string, error) {
	r, ok := obj.(*appsv1.ControllerRevision)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(r); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// Store reads ControllerRevisions from an informer cache and writes them through a client.
type Store struct {
	Lister appslisters.ControllerRevisionLister
	// Index, when set and holding ControllerUIDIndex (AddControllerUIDIndex), is the informer's indexer:
	// Owned reads through it.
	Index  cache.Indexer
	Client kubernetes.Interface
	// FieldManager is the field manager of the writes.
	FieldManager string
	// CountAction, when set, counts each write ("create-revision", "update-revision", "delete-revision")
	// with its error.
	CountAction func(action string, err error)
}

func (s Store) count(action string, err error) {
	if s.CountAction != nil {
		s.CountAction(action, err)
	}
}

// Owned returns the cached ControllerRevisions of namespace whose controller reference has uid (read only),
// through ControllerUIDIndex when the Store has it, else from every revision of the namespace.
func (s Store) Owned(namespace string, uid types.UID) ([]*appsv1.ControllerRevision, error) {
	if s.Index != nil {
		if objs, err := s.Index.ByIndex(ControllerUIDIndex, string(uid)); err == nil {
			var out []*appsv1.ControllerRevision
			for _, obj := range objs {
				if r, ok := obj.(*appsv1.ControllerRevision); ok && r.Namespace == namespace && controlledBy(r, uid) {
					out = append(out, r)
				}
			}
			return out, nil
		}
	}
	all, err := s.Lister.ControllerRevisions(namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for _, r := range all {
		if controlledBy(r, uid) {
			out = append(out, r)
		}
	}
	return out, nil
}

func controlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}

// Newest returns the highest revision number of revs, 0 when there are none.
func Newest(revs []*appsv1.ControllerRevision) int64 {
	var newest int64
	for _, r := range revs {
		if r.Revision > newest {
			newest = r.Revision
		}
	}
	return newest
}

// SameData reports whether two JSON documents are equal, byte for byte or once decoded (numbers compared
// as written, not as float64).
func SameData(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Revision is the ControllerRevision an owner wants: the one holding Data.
type Revision struct {
	Namespace string
	// Owner is the UID of the owner's controller reference: only revisions it controls are reused.
	Owner types.UID
	Data  []byte
	// Name returns the revision's name for the current *CollisionCount.
	Name func() string
	// New returns the revision to create under name with revision number number (labels, owner
	// reference, Data).
	New func(name string, number int64) *appsv1.ControllerRevision
	// CollisionCount is the owner's status.collisionCount (in a private copy of the owner): Ensure
	// increments it on a hash collision, which changes Name.
	CollisionCount **int32
}

// Ensure makes sure the ControllerRevision holding want.Data exists and is the newest (numbers above newest,
// the highest number of the owner's revisions) and returns its name. A revision of that name with other
// data, or not controlled by the owner, is a hash collision: the collision count is incremented and the
// next name tried, at most MaxCollisions times. A revision with equal data is reused (a rollback); when it
// is older than newest it is renumbered newest+1 and renumbered is true.
func (s Store) Ensure(ctx context.Context, want Revision, newest int64) (name string, renumbered bool, err error) {
	client := s.Client.AppsV1().ControllerRevisions(want.Namespace)
	for attempt := 0; attempt <= MaxCollisions; attempt++ {
		name := want.Name()
		existing, err := s.Lister.ControllerRevisions(want.Namespace).Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return "", false, err
		}
		if existing == nil {
			_, err := client.Create(ctx, want.New(name, newest+1), metav1.CreateOptions{FieldManager: s.FieldManager})
			s.count("create-revision", err)
			if err == nil {
				klog.FromContext(ctx).V(2).Info("Created ControllerRevision", "revision", name, "number", newest+1)
				return name, false, nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return "", false, fmt.Errorf("creating ControllerRevision %s: %w", name, err)
			}
			// The cache is behind: look at the stored one.
			if existing, err = client.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return "", false, fmt.Errorf("reading ControllerRevision %s: %w", name, err)
			}
		}
		ours := controlledBy(existing, want.Owner)
		if ours && existing.DeletionTimestamp != nil {
			return "", false, fmt.Errorf("ControllerRevision %s is being deleted; waiting for it to be gone", name)
		}
		if ours && SameData(existing.Data.Raw, want.Data) {
			if existing.Revision >= newest {
				return name, false, nil
			}
			updated := existing.DeepCopy()
			updated.Revision = newest + 1
			_, err := client.Update(ctx, updated, metav1.UpdateOptions{FieldManager: s.FieldManager})
			s.count("update-revision", err)
			if err != nil {
				return "", false, fmt.Errorf("making ControllerRevision %s the newest: %w", name, err)
			}
			return name, true, nil
		}
		count := int32(0)
		if *want.CollisionCount != nil {
			count = **want.CollisionCount
		}
		count++
		*want.CollisionCount = &count
		klog.FromContext(ctx).Info("ControllerRevision name collision, incrementing collisionCount", "revision", name, "collisionCount", count)
	}
	return "", false, fmt.Errorf("no free ControllerRevision name after %d hash collisions", MaxCollisions)
}

// Prune deletes the oldest of owned (by revision number, then name) beyond limit (negative counts as 0).
// Revisions that keep reports true for, and revisions being deleted, are never deleted and not counted.
// A revision deleted or replaced meanwhile (not found, UID precondition conflict) is no error.
func (s Store) Prune(ctx context.Context, owned []*appsv1.ControllerRevision, limit int, keep func(name string) bool) error {
	limit = max(limit, 0)
	var old []*appsv1.ControllerRevision
	for _, r := range owned {
		if !keep(r.Name) && r.DeletionTimestamp == nil {
			old = append(old, r)
		}
	}
	if len(old) <= limit {
		return nil
	}
	sort.Slice(old, func(i, j int) bool {
		if old[i].Revision != old[j].Revision {
			return old[i].Revision < old[j].Revision
		}
		return old[i].Name < old[j].Name
	})
	var errs []error
	for _, r := range old[:len(old)-limit] {
		uid := r.UID
		err := s.Client.AppsV1().ControllerRevisions(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		s.count("delete-revision", err)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting old ControllerRevision %s: %w", r.Name, err))
			continue
		}
		klog.FromContext(ctx).V(2).Info("Deleted old ControllerRevision", "revision", r.Name, "number", r.Revision)
	}
	return utilerrors.NewAggregate(errs)
}
