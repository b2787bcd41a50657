package nodepool

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// Storage holds the REST storage of nodepools and its status; both are requestpath.Providers (NewStorage
// declares their request path).
type Storage struct {
	NodePool *registry.REST
	Status   *registry.StatusREST
}

// NewStorage builds the etcd-backed storage of nodepools and nodepools/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &openyurt.NodePool{} },
		NewListFunc:               func() runtime.Object { return &openyurt.NodePoolList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  openyurt.Resource("nodepools"),
		SingularQualifiedResource: openyurt.Resource("nodepool"),

		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy,
		ResetFieldsStrategy: strategy,

		TableConvertor: tableConvertor,
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, err
	}
	// The request path (package requestpath): registry.ApplyMark (NewREST and NewStatusREST put it first),
	// then the strategic merge patch step with requestpath.StrictMerge, which answers 400 or 422 for patches
	// the upstream merge code refuses unclassified or panics on (the upstream handler answers 500).
	// NodePools are served in two versions by this one storage; patches are judged in the request's version.
	patch := requestpath.StrategicMergePatch{Store: store, Merge: requestpath.StrictMerge}
	return &Storage{
		NodePool: registry.NewREST(store, []string{"np"}, nil, patch),
		Status:   registry.NewStatusREST(store, NewStatusStrategy(scheme), patch),
	}, nil
}

// tableConvertor prints NodePools as OpenYurt's v1beta2 does: NAME TYPE READYNODES NOTREADYNODES LEADERNODES
// LEADERELECTIONAGE AGE, and with -o wide the node selector. The leader columns are empty for a pool without
// leader election.
var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Type", Type: "string", Description: "Edge or Cloud."},
		{Name: "ReadyNodes", Type: "integer", Description: "The number of Ready nodes in the pool."},
		{Name: "NotReadyNodes", Type: "integer", Description: "The number of nodes in the pool that are not Ready."},
		{Name: "LeaderNodes", Type: "string", Description: "The number of elected leaders, with leader election enabled."},
		{Name: "LeaderElectionAge", Type: "string", Description: "Time since the set of leaders last changed."},
		{Name: "Selector", Type: "string", Priority: 1, Description: "The label selector of the pool's nodes."},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		pool, ok := obj.(*openyurt.NodePool)
		if !ok {
			return nil, registry.ObjectTypeError("NodePool", obj)
		}
		leaders := ""
		if pool.Spec.EnableLeaderElection || pool.Status.LeaderNum != 0 {
			leaders = strconv.Itoa(int(pool.Status.LeaderNum))
		}
		return []interface{}{
			string(pool.Spec.Type),
			int64(pool.Status.ReadyNodeNum),
			int64(pool.Status.UnreadyNodeNum),
			leaders,
			registry.SinceString(pool.Status.LeaderLastElectedTime),
			registry.SelectorString(pool.Spec.Selector),
		}, nil
	},
}
