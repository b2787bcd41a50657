package yurtappdaemon

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// Storage holds the REST storage of yurtappdaemons and its status; both are requestpath.Providers (NewStorage
// declares their request path).
type Storage struct {
	YurtAppDaemon *registry.REST
	Status        *registry.StatusREST
}

// NewStorage builds the etcd-backed storage of yurtappdaemons and yurtappdaemons/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &openyurt.YurtAppDaemon{} },
		NewListFunc:               func() runtime.Object { return &openyurt.YurtAppDaemonList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  openyurt.Resource("yurtappdaemons"),
		SingularQualifiedResource: openyurt.Resource("yurtappdaemon"),

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
		YurtAppDaemon: registry.NewREST(store, []string{"yad"}, []string{"all"}, patch),
		Status:        registry.NewStatusREST(store, NewStatusStrategy(scheme), patch),
	}, nil
}

// tableConvertor prints YurtAppDaemons: NAME WORKLOADTEMPLATE NODEPOOLS AGE, and with -o wide the pod
// selector and the node pool selector.
var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "WorkloadTemplate", Type: "string", Description: "The kind of workload created per pool."},
		{Name: "NodePools", Type: "integer", Description: "The number of selected node pools."},
		{Name: "Selector", Type: "string", Priority: 1, Description: "The label selector of the pods."},
		{Name: "NodePoolSelector", Type: "string", Priority: 1, Description: "The label selector of the node pools."},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		yad, ok := obj.(*openyurt.YurtAppDaemon)
		if !ok {
			return nil, registry.ObjectTypeError("YurtAppDaemon", obj)
		}
		kind := string(yad.Status.TemplateType)
		if kind == "" {
			kind = string(templateType(yad))
		}
		return []interface{}{
			kind,
			int64(len(yad.Status.NodePools)),
			registry.SelectorString(yad.Spec.Selector),
			registry.SelectorString(yad.Spec.NodePoolSelector),
		}, nil
	},
}
