package yurtappset

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// ShortNames and Categories are those of OpenYurt's YurtAppSet CRD: `kubectl get yas`, `kubectl get yurt`.
var (
	ShortNames = []string{"yas"}
	Categories = []string{"yurt"}
)

// Storage holds the REST storage of yurtappsets and its status; both are requestpath.Providers (NewStorage
// declares their request path).
type Storage struct {
	YurtAppSet *registry.REST
	Status     *registry.StatusREST
}

// NewStorage builds the etcd-backed storage of yurtappsets and yurtappsets/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &openyurt.YurtAppSet{} },
		NewListFunc:               func() runtime.Object { return &openyurt.YurtAppSetList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  openyurt.Resource("yurtappsets"),
		SingularQualifiedResource: openyurt.Resource("yurtappset"),

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
	patch := requestpath.StrategicMergePatch{Store: store, Merge: requestpath.StrictMerge}
	return &Storage{
		YurtAppSet: registry.NewREST(store, ShortNames, Categories, patch),
		Status:     registry.NewStatusREST(store, NewStatusStrategy(scheme), patch),
	}, nil
}

// tableConvertor prints YurtAppSets as OpenYurt's CRD does: NAME TOTAL READY UPDATED AGE, and with -o wide
// the workload kind, the node pool selector and the named pools.
var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Total", Type: "integer", Description: "The total number of workloads."},
		{Name: "Ready", Type: "integer", Description: "The number of workloads ready."},
		{Name: "Updated", Type: "integer", Description: "The number of workloads updated."},
		{Name: "Workload", Type: "string", Priority: 1, Description: "The kind of workload created per pool."},
		{Name: "NodePoolSelector", Type: "string", Priority: 1, Description: "The label selector of the node pools."},
		{Name: "Pools", Type: "string", Priority: 1, Description: "The node pools named in spec.pools."},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		yas, ok := obj.(*openyurt.YurtAppSet)
		if !ok {
			return nil, registry.ObjectTypeError("YurtAppSet", obj)
		}
		t := &yas.Spec.Workload.WorkloadTemplate
		return []interface{}{
			int64(yas.Status.TotalWorkloads),
			int64(yas.Status.ReadyWorkloads),
			int64(yas.Status.UpdatedWorkloads),
			string(openyurt.WorkloadTemplateType(t.DeploymentTemplate != nil, t.StatefulSetTemplate != nil)),
			registry.SelectorString(yas.Spec.NodePoolSelector),
			poolList(yas.Spec.Pools),
		}, nil
	},
}

// poolList joins pool names with commas, "<none>" when there are none.
func poolList(pools []string) string {
	if len(pools) == 0 {
		return "<none>"
	}
	return strings.Join(pools, ",")
}
