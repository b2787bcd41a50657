package yurtappdaemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

const (
	// YurtAppDaemonLabel on a ControllerRevision names the YurtAppDaemon it belongs to (a hash of the name
	// if the name is not a valid label value). Ownership is decided by the controller ownerReference alone.
	YurtAppDaemonLabel = "apps.openyurt.io/yurtappdaemon"
	// ControllerRevisionHashLabel on a ControllerRevision is its hash (policy.Revision), under the key
	// Kubernetes' own controllers use on their ControllerRevisions. (policy.RevisionHashLabel is another
	// label: the revision a child was rendered from.)
	ControllerRevisionHashLabel = "controller.kubernetes.io/hash"
	// maxCollisions bounds the collisionCount increments of one sync.
	maxCollisions = 5
)

// yadLabelValue is the YurtAppDaemonLabel value of name.
func yadLabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	return stablehash.String(name)
}

// ownedRevisions returns the cached ControllerRevisions of yad's namespace that yad controls (read only).
func (c *Controller) ownedRevisions(yad *v1alpha1.YurtAppDaemon) ([]*appsv1.ControllerRevision, error) {
	all, err := c.revisions.ControllerRevisions(yad.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for _, r := range all {
		if controlledBy(r, yad.UID) {
			out = append(out, r)
		}
	}
	return out, nil
}

func controlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}

// sameData reports whether two JSON documents are equal, byte for byte or once decoded.
func sameData(a, b []byte) bool {
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

// newRevision returns the ControllerRevision of yad's current template.
func newRevision(yad *v1alpha1.YurtAppDaemon, name string, data []byte, number int64) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: yad.Namespace,
			Labels: map[string]string{
				YurtAppDaemonLabel:          yadLabelValue(yad.Name),
				ControllerRevisionHashLabel: policy.Revision(yad),
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(yad, policy.ControllerKind)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
}

// syncRevision makes sure the ControllerRevision of yad's current template exists and is the newest, and
// returns its name (policy.RevisionName). yad is a private copy: on a hash collision (a revision of that
// name with other data, or not ours) its status.collisionCount is incremented, which changes the name.
// A template equal to an older revision reuses it (a rollback): its revision number becomes the newest.
func (c *Controller) syncRevision(ctx context.Context, yad *v1alpha1.YurtAppDaemon) (string, error) {
	data, err := policy.TemplateJSON(yad)
	if err != nil {
		return "", fmt.Errorf("encoding the workload template: %w", err)
	}
	owned, err := c.ownedRevisions(yad)
	if err != nil {
		return "", err
	}
	var newest int64
	for _, r := range owned {
		if r.Revision > newest {
			newest = r.Revision
		}
	}
	for attempt := 0; attempt <= maxCollisions; attempt++ {
		name := policy.RevisionName(yad)
		existing, err := c.revisions.ControllerRevisions(yad.Namespace).Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return "", err
		}
		if existing == nil {
			_, err := c.kubeClient.AppsV1().ControllerRevisions(yad.Namespace).Create(ctx, newRevision(yad, name, data, newest+1), metav1.CreateOptions{FieldManager: fieldManager})
			metrics.CountAction("create-revision", err)
			if err == nil {
				klog.FromContext(ctx).V(2).Info("Created ControllerRevision", "revision", name, "number", newest+1)
				return name, nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return "", fmt.Errorf("creating ControllerRevision %s: %w", name, err)
			}
			// The cache is behind: look at the stored one.
			if existing, err = c.kubeClient.AppsV1().ControllerRevisions(yad.Namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return "", fmt.Errorf("reading ControllerRevision %s: %w", name, err)
			}
		}
		if controlledBy(existing, yad.UID) && existing.DeletionTimestamp != nil {
			return "", fmt.Errorf("ControllerRevision %s is being deleted; waiting for it to be gone", name)
		}
		if controlledBy(existing, yad.UID) && sameData(existing.Data.Raw, data) {
			if existing.Revision < newest {
				if err := c.bumpRevision(ctx, existing, newest+1); err != nil {
					return "", err
				}
				c.recorder.Eventf(yad, corev1.EventTypeNormal, "RevisionReused", "Template matches revision %s: it is now revision %d", name, newest+1)
			}
			return name, nil
		}
		count := int32(0)
		if yad.Status.CollisionCount != nil {
			count = *yad.Status.CollisionCount
		}
		count++
		yad.Status.CollisionCount = &count
		klog.FromContext(ctx).Info("ControllerRevision name collision, incrementing collisionCount", "revision", name, "collisionCount", count)
	}
	return "", fmt.Errorf("no free ControllerRevision name after %d hash collisions", maxCollisions)
}

// bumpRevision makes rev (a cache object) the newest revision.
func (c *Controller) bumpRevision(ctx context.Context, rev *appsv1.ControllerRevision, number int64) error {
	updated := rev.DeepCopy()
	updated.Revision = number
	_, err := c.kubeClient.AppsV1().ControllerRevisions(rev.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
	metrics.CountAction("update-revision", err)
	if err != nil {
		return fmt.Errorf("making ControllerRevision %s the newest: %w", rev.Name, err)
	}
	return nil
}

// truncateHistory deletes the oldest revisions of yad beyond spec.revisionHistoryLimit (default 10). The
// current revision and the revisions live children still carry are never deleted and not counted.
func (c *Controller) truncateHistory(ctx context.Context, yad *v1alpha1.YurtAppDaemon, current string, inUse map[string]bool) error {
	limit := 10
	if l := yad.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	if limit < 0 {
		limit = 0
	}
	owned, err := c.ownedRevisions(yad)
	if err != nil {
		return err
	}
	var old []*appsv1.ControllerRevision
	for _, r := range owned {
		if r.Name != current && !inUse[r.Name] && r.DeletionTimestamp == nil {
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
