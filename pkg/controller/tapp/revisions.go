package tapp

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
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/workloop"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

const (
	// TAppLabel on a ControllerRevision names the TApp it belongs to (a hash of the name when the name is
	// not a valid label value). Ownership is decided by the controller reference alone.
	TAppLabel = "apps.tkestack.io/tapp"
	// revisionHashLabel on a ControllerRevision is its hash, under the key Kubernetes' controllers use.
	revisionHashLabel = "controller.kubernetes.io/hash"
	// maxCollisions bounds the collisionCount increments of one sync.
	maxCollisions = 5
)

func tappLabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	return stablehash.String(name)
}

// ownedRevisions returns the cached ControllerRevisions of tapp's namespace that tapp controls (read only).
func (c *Controller) ownedRevisions(tapp *tkestackv1.TApp) ([]*appsv1.ControllerRevision, error) {
	all, err := c.revisions.ControllerRevisions(tapp.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for _, r := range all {
		if policy.IsControlledBy(r, tapp) {
			out = append(out, r)
		}
	}
	return out, nil
}

// sameData reports whether two JSON documents are equal, byte for byte or once decoded.
func sameData(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// syncRevisions makes sure the ControllerRevision of tapp's templates exists and is the newest, and returns
// the revisions the plan uses. tapp is a private copy: on a hash collision (a revision of that name with
// other data, or not tapp's) its status.collisionCount is incremented, which changes the name. Templates
// equal to an older revision reuse it (a rollback): its revision number becomes the newest.
//
// The current revision is status.currentRevision; when it is empty (a new TApp) or its ControllerRevision is
// gone, the current revision is the update revision, as for a StatefulSet.
func (c *Controller) syncRevisions(ctx context.Context, tapp *tkestackv1.TApp) (policy.Revisions, error) {
	data, err := policy.RevisionData(tapp)
	if err != nil {
		return policy.Revisions{}, fmt.Errorf("encoding the templates: %w", err)
	}
	owned, err := c.ownedRevisions(tapp)
	if err != nil {
		return policy.Revisions{}, err
	}
	var newest int64
	for _, r := range owned {
		if r.Revision > newest {
			newest = r.Revision
		}
	}
	update, err := c.ensureRevision(ctx, tapp, data, newest)
	if err != nil {
		return policy.Revisions{}, err
	}
	revs := policy.Revisions{Update: update, Current: update}
	current := tapp.Status.CurrentRevision
	if current == "" || current == update {
		return revs, nil
	}
	for _, r := range owned {
		if r.Name != current {
			continue
		}
		templates, err := policy.DecodeRevision(r.Data.Raw)
		if err != nil {
			klog.FromContext(ctx).Info("Ignoring the current revision: its data cannot be decoded", "revision", current, "err", err)
			return revs, nil
		}
		revs.Current, revs.CurrentTemplates = current, templates
		return revs, nil
	}
	klog.FromContext(ctx).V(2).Info("The current revision is gone; the update revision becomes current", "revision", current)
	return revs, nil
}

// ensureRevision creates or reuses the ControllerRevision holding data and returns its name.
func (c *Controller) ensureRevision(ctx context.Context, tapp *tkestackv1.TApp, data []byte, newest int64) (string, error) {
	client := c.kubeClient.AppsV1().ControllerRevisions(tapp.Namespace)
	for attempt := 0; attempt <= maxCollisions; attempt++ {
		name := policy.RevisionName(tapp)
		existing, err := c.revisions.ControllerRevisions(tapp.Namespace).Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return "", err
		}
		if existing == nil {
			rev := &appsv1.ControllerRevision{
				ObjectMeta: metav1.ObjectMeta{
					Name:      name,
					Namespace: tapp.Namespace,
					Labels: map[string]string{
						TAppLabel:         tappLabelValue(tapp.Name),
						revisionHashLabel: policy.RevisionHash(tapp),
					},
					OwnerReferences: []metav1.OwnerReference{policy.OwnerReference(tapp)},
				},
				Data:     runtime.RawExtension{Raw: data},
				Revision: newest + 1,
			}
			_, err := client.Create(ctx, rev, metav1.CreateOptions{FieldManager: fieldManager})
			metrics.CountAction("create-revision", err)
			if err == nil {
				klog.FromContext(ctx).V(2).Info("Created ControllerRevision", "revision", name, "number", newest+1)
				return name, nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return "", fmt.Errorf("creating ControllerRevision %s: %w", name, err)
			}
			// The cache is behind: look at the stored one.
			if existing, err = client.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return "", fmt.Errorf("reading ControllerRevision %s: %w", name, err)
			}
		}
		ours := policy.IsControlledBy(existing, tapp)
		if ours && existing.DeletionTimestamp != nil {
			return "", fmt.Errorf("ControllerRevision %s is being deleted; waiting for it to be gone", name)
		}
		if ours && sameData(existing.Data.Raw, data) {
			if existing.Revision < newest {
				updated := existing.DeepCopy()
				updated.Revision = newest + 1
				_, err := client.Update(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
				metrics.CountAction("update-revision", err)
				if err != nil {
					return "", fmt.Errorf("making ControllerRevision %s the newest: %w", name, err)
				}
			}
			return name, nil
		}
		count := int32(0)
		if tapp.Status.CollisionCount != nil {
			count = *tapp.Status.CollisionCount
		}
		count++
		tapp.Status.CollisionCount = &count
		klog.FromContext(ctx).Info("ControllerRevision name collision, incrementing collisionCount", "revision", name, "collisionCount", count)
	}
	return "", fmt.Errorf("no free ControllerRevision name after %d hash collisions", maxCollisions)
}

// truncateHistory deletes the oldest revisions of tapp beyond spec.revisionHistoryLimit (default 10). The
// current and update revisions and the revisions pods still carry (controller-revision-hash) are never
// deleted and not counted.
func (c *Controller) truncateHistory(ctx context.Context, tapp *tkestackv1.TApp, keep map[string]bool) error {
	limit := tkestack.DefaultRevisionHistoryLimit
	if l := tapp.Spec.RevisionHistoryLimit; l != nil {
		limit = max(int(*l), 0)
	}
	owned, err := c.ownedRevisions(tapp)
	if err != nil {
		return err
	}
	var old []*appsv1.ControllerRevision
	for _, r := range owned {
		if !keep[r.Name] && r.DeletionTimestamp == nil {
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
		err := c.kubeClient.AppsV1().ControllerRevisions(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		metrics.CountAction("delete-revision", err)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting old ControllerRevision %s: %w", r.Name, err))
			continue
		}
		klog.FromContext(ctx).V(2).Info("Deleted old ControllerRevision", "revision", r.Name, "number", r.Revision)
	}
	return utilerrors.NewAggregate(errs)
}

// revisionDeleted requeues the TApp that controlled a deleted ControllerRevision, so that it is recreated if
// it is still needed.
func (c *Controller) revisionDeleted(obj any) {
	rev, ok := workloop.Deleted[*appsv1.ControllerRevision](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rev); ref != nil && ref.Kind == tappKind.Kind && ref.APIVersion == tkestackv1.SchemeGroupVersion.String() {
		c.queue.Add(rev.Namespace + "/" + ref.Name)
	}
}
