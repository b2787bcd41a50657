package storagefence

import (
	"context"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
)

// Report is what `tapp-apiserver storage status` shows: both records and the verdict.
type Report struct {
	Store   StoreRecord
	Cluster ClusterRecord
	Verdict Verdict
	Where   string
	Record  types.NamespacedName
}

// Status reads both sides and decides, writing nothing.
func Status(ctx context.Context, store *Store, cluster *Cluster) Report {
	rec, _ := cluster.Read(ctx)
	st := store.Read(ctx)
	return Report{Store: st, Cluster: rec, Verdict: Decide(rec, st), Where: store.Where, Record: cluster.Name}
}

// Print writes the report for an operator.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "Store:   %s\n", r.Where)
	switch r.Store.State {
	case StoreIdentified:
		fmt.Fprintf(w, "  identity: %s\n", r.Store.Identity)
	case StoreEmpty:
		fmt.Fprintf(w, "  identity: none, the store is empty\n")
	case StoreUnidentified:
		fmt.Fprintf(w, "  identity: none, but the store holds objects\n")
	case StoreUnreadable:
		fmt.Fprintf(w, "  unreadable: %v\n", r.Store.Err)
	}
	if r.Store.State != StoreUnreadable {
		fmt.Fprintf(w, "  revision: %d\n", r.Store.Revision)
	}
	fmt.Fprintf(w, "Cluster: ConfigMap %s\n", r.Record)
	switch r.Cluster.State {
	case ClusterPresent:
		fmt.Fprintf(w, "  identity: %s\n  high-water revision: %d\n", r.Cluster.Identity, r.Cluster.HighWater)
	case ClusterAbsent:
		fmt.Fprintf(w, "  no record\n")
	case ClusterUnreadable:
		fmt.Fprintf(w, "  unreadable: %v\n", r.Cluster.Err)
	}
	switch r.Verdict.Action {
	case Serve:
		fmt.Fprintf(w, "Verdict: %s: the store is the cluster's\n", r.Verdict.Action)
	case Initialise, Record:
		fmt.Fprintf(w, "Verdict: %s: the server records the store's identity in the cluster and serves\n", r.Verdict.Action)
	default:
		fmt.Fprintf(w, "Verdict: %s (%s): %s\n", r.Verdict.Action, r.Verdict.Reason, r.Verdict.Message)
	}
}

// Accept makes the store the cluster's: it gives an empty or unidentified store a new identity and
// records the store's identity and current revision in the cluster, over the record as read (a concurrent
// change of the record fails the write). It returns the identity and the mark.
func Accept(ctx context.Context, store *Store, cluster *Cluster) (Identity, int64, error) {
	rec, cm := cluster.Read(ctx)
	if rec.State == ClusterUnreadable {
		return Identity{}, 0, fmt.Errorf("cannot read the cluster's record: %w", rec.Err)
	}
	st := store.Read(ctx)
	id := st.Identity
	switch st.State {
	case StoreUnreadable:
		return Identity{}, 0, fmt.Errorf("cannot read the store: %w", st.Err)
	case StoreEmpty, StoreUnidentified:
		var err error
		if id, err = store.Identify(ctx, Identity{ID: string(uuid.NewUUID()), Created: time.Now().UTC().Truncate(time.Second)}); err != nil {
			return Identity{}, 0, fmt.Errorf("writing the store's identity: %w", err)
		}
		if st = store.Read(ctx); st.State != StoreIdentified || st.Identity.ID != id.ID {
			return Identity{}, 0, fmt.Errorf("the store's identity did not stick: %v", st.Err)
		}
	}
	if err := cluster.Replace(ctx, cm, id, st.Revision); err != nil {
		return Identity{}, 0, fmt.Errorf("recording the store's identity in ConfigMap %s: %w", cluster.Name, err)
	}
	return id, st.Revision, nil
}

// ownerKinds are the kinds whose children the garbage collector deletes when the store lacks them.
var ownerKinds = []schema.GroupKind{
	{Group: "apps.tkestack.io", Kind: "TApp"},
	{Group: "apps.openyurt.io", Kind: "YurtAppDaemon"},
	{Group: "apps.openyurt.io", Kind: "YurtAppSet"},
}

// Orphans counts, by resource, the pods, claims, Deployments, StatefulSets and ControllerRevisions of the
// cluster owned by a TApp, YurtAppDaemon or YurtAppSet that the store does not hold: what the garbage collector deletes
// once the store is served.
func Orphans(ctx context.Context, kube kubernetes.Interface, stored []StoredObject) (map[string]int, error) {
	held := sets.New[types.UID]()
	for _, o := range stored {
		held.Insert(o.UID)
	}
	orphaned := func(refs []metav1.OwnerReference) bool {
		for _, ref := range refs {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err != nil {
				continue
			}
			for _, k := range ownerKinds {
				if gv.Group == k.Group && ref.Kind == k.Kind && !held.Has(ref.UID) {
					return true
				}
			}
		}
		return false
	}
	counts := map[string]int{}
	all := metav1.ListOptions{}
	pods, err := kube.CoreV1().Pods("").List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, o := range pods.Items {
		if orphaned(o.OwnerReferences) {
			counts["pods"]++
		}
	}
	claims, err := kube.CoreV1().PersistentVolumeClaims("").List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, o := range claims.Items {
		if orphaned(o.OwnerReferences) {
			counts["persistentvolumeclaims"]++
		}
	}
	deployments, err := kube.AppsV1().Deployments("").List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, o := range deployments.Items {
		if orphaned(o.OwnerReferences) {
			counts["deployments"]++
		}
	}
	statefulSets, err := kube.AppsV1().StatefulSets("").List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, o := range statefulSets.Items {
		if orphaned(o.OwnerReferences) {
			counts["statefulsets"]++
		}
	}
	revisions, err := kube.AppsV1().ControllerRevisions("").List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, o := range revisions.Items {
		if orphaned(o.OwnerReferences) {
			counts["controllerrevisions"]++
		}
	}
	return counts, nil
}
