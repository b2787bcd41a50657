package storagefence

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// DefaultRecord is the ConfigMap that holds the cluster's record in artifacts/deploy and the local cluster.
var DefaultRecord = types.NamespacedName{Namespace: "tapp-system", Name: "tapp-apiserver-storage-identity"}

// Keys of the cluster record's data.
const (
	dataID        = "id"
	dataCreated   = "created"
	dataHighWater = "highWaterRevision"
)

// Cluster reads and writes the cluster's record: a ConfigMap in the server's namespace. Every write carries
// the resourceVersion it read, so that replicas never overwrite each other's record.
type Cluster struct {
	Client kubernetes.Interface
	Name   types.NamespacedName
}

// Read returns the record and the ConfigMap it came from (nil when absent or unreadable).
func (c *Cluster) Read(ctx context.Context) (ClusterRecord, *corev1.ConfigMap) {
	cm, err := c.Client.CoreV1().ConfigMaps(c.Name.Namespace).Get(ctx, c.Name.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ClusterRecord{State: ClusterAbsent}, nil
	case err != nil:
		return ClusterRecord{State: ClusterUnreadable, Err: err}, nil
	}
	rec, err := parseRecord(cm)
	if err != nil {
		return ClusterRecord{State: ClusterUnreadable, Err: fmt.Errorf("ConfigMap %s: %w", c.Name, err)}, cm
	}
	return rec, cm
}

func parseRecord(cm *corev1.ConfigMap) (ClusterRecord, error) {
	rec := ClusterRecord{State: ClusterPresent, Identity: Identity{ID: cm.Data[dataID]}}
	if rec.Identity.ID == "" {
		return ClusterRecord{}, fmt.Errorf("no %s", dataID)
	}
	var err error
	if rec.Identity.Created, err = time.Parse(time.RFC3339, cm.Data[dataCreated]); err != nil {
		return ClusterRecord{}, fmt.Errorf("%s: %w", dataCreated, err)
	}
	if rec.HighWater, err = strconv.ParseInt(cm.Data[dataHighWater], 10, 64); err != nil {
		return ClusterRecord{}, fmt.Errorf("%s: %w", dataHighWater, err)
	}
	return rec, nil
}

func setRecord(cm *corev1.ConfigMap, id Identity, mark int64) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[dataID] = id.ID
	cm.Data[dataCreated] = id.Created.UTC().Format(time.RFC3339)
	cm.Data[dataHighWater] = strconv.FormatInt(mark, 10)
}

// Create records id with the mark. It fails with AlreadyExists when another replica was first.
func (c *Cluster) Create(ctx context.Context, id Identity, mark int64) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: c.Name.Namespace, Name: c.Name.Name,
		Labels: map[string]string{"app.kubernetes.io/name": "tapp-apiserver", "app.kubernetes.io/component": "storage-identity"},
		Annotations: map[string]string{"tapp-apiserver.io/description": "The identity of tapp-apiserver's store and the " +
			"highest revision served from it. tapp-apiserver refuses to serve a store that does not match; change it " +
			"only with `tapp-apiserver storage accept`."},
	}}
	setRecord(cm, id, mark)
	_, err := c.Client.CoreV1().ConfigMaps(c.Name.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	return err
}

// Replace makes id with the mark the record, over cm as read (its resourceVersion is the precondition), or
// creates the record when cm is nil.
func (c *Cluster) Replace(ctx context.Context, cm *corev1.ConfigMap, id Identity, mark int64) error {
	if cm == nil {
		return c.Create(ctx, id, mark)
	}
	cm = cm.DeepCopy()
	setRecord(cm, id, mark)
	_, err := c.Client.CoreV1().ConfigMaps(c.Name.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// AdvanceMark raises the record's mark to revision if the record still names id and its mark is lower;
// a conflicting write of another replica is read again and retried.
func (c *Cluster) AdvanceMark(ctx context.Context, id Identity, revision int64) error {
	var last error // of the last attempt
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		last = nil
		rec, cm := c.Read(ctx)
		if rec.State == ClusterUnreadable {
			last = rec.Err
			return last
		}
		if rec.State != ClusterPresent || rec.Identity.ID != id.ID || rec.HighWater >= revision {
			return nil
		}
		last = c.Replace(ctx, cm, rec.Identity, revision)
		return last
	})
	if last != nil {
		// The error of the last attempt: retry.OnError returns instead its last retriable error (nil when
		// there was none) for an error that wait.Interrupted matches, such as the context's cancellation.
		return last
	}
	return err
}
