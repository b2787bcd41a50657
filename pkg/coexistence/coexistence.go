// Package coexistence notices when the cluster serves one of tapp-apiserver's group-versions or resources
// elsewhere: an APIService of one of its group-versions that routes to another service or to kube-apiserver
// itself (a CRD or a built-in API), or a CRD of one of its resources or group-versions. The aggregator routes
// per group-version, so either splits a group between two stores. Check is the pure comparison; Watcher
// runs it on every change of the cluster's APIServices and CRDs, and logs each finding and records it as
// a Warning Event on the APIService or CRD once, when it appears.
package coexistence

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Reason is the reason of the Events this package records.
const Reason = "ServedElsewhere"

// DefaultService is the Service the APIServices of artifacts/deploy and of the local cluster point to.
var DefaultService = types.NamespacedName{Namespace: "tapp-system", Name: "tapp-apiserver"}

var (
	apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	crdsGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// APIService is what the check reads of an APIService. Service is nil when kube-apiserver serves the
// group-version itself.
type APIService struct {
	Name, Group, Version string
	UID                  types.UID
	Service              *types.NamespacedName
}

// CRD is what the check reads of a CustomResourceDefinition.
type CRD struct {
	Name, Group, Plural string
	UID                 types.UID
	Versions            []string // the served ones
}

// Finding is one way the cluster serves something of ours elsewhere.
type Finding struct {
	// Kind and Name name the APIService or CustomResourceDefinition.
	Kind, Name string
	UID        types.UID
	Message    string
}

// Check compares the APIServices and CRDs of a cluster with the resources this server serves and returns
// the findings, sorted by kind and name. own is the Service this server's APIServices point to.
func Check(served []schema.GroupVersionResource, own types.NamespacedName, apiServices []APIService, crds []CRD) []Finding {
	versions := map[schema.GroupVersion]bool{}
	resources := map[schema.GroupResource]bool{}
	for _, r := range served {
		versions[r.GroupVersion()] = true
		resources[r.GroupResource()] = true
	}
	var out []Finding
	for _, a := range apiServices {
		gv := schema.GroupVersion{Group: a.Group, Version: a.Version}
		if !versions[gv] {
			continue
		}
		switch {
		case a.Service == nil:
			out = append(out, Finding{Kind: "APIService", Name: a.Name, UID: a.UID, Message: fmt.Sprintf(
				"APIService %s makes kube-apiserver serve %s itself (from CRDs), so tapp-apiserver's %s are not reachable there; see Coexistence in docs/install.md",
				a.Name, gv, servedIn(served, gv))})
		case *a.Service != own:
			out = append(out, Finding{Kind: "APIService", Name: a.Name, UID: a.UID, Message: fmt.Sprintf(
				"APIService %s routes %s to the service %s, not to tapp-apiserver's %s; see Coexistence in docs/install.md",
				a.Name, gv, a.Service, own)})
		}
	}
	for _, c := range crds {
		gr := schema.GroupResource{Group: c.Group, Resource: c.Plural}
		var shared []string
		for _, v := range c.Versions {
			if versions[schema.GroupVersion{Group: c.Group, Version: v}] {
				shared = append(shared, v)
			}
		}
		switch {
		case resources[gr]:
			out = append(out, Finding{Kind: "CustomResourceDefinition", Name: c.Name, UID: c.UID, Message: fmt.Sprintf(
				"CRD %s serves %s (versions %v), which tapp-apiserver serves too: the aggregator routes each version to one of them; move the objects with tapp-apiserver migrate or keep the CRD and leave the group's APIServices out (docs/install.md)",
				c.Name, gr, c.Versions)})
		case len(shared) > 0:
			out = append(out, Finding{Kind: "CustomResourceDefinition", Name: c.Name, UID: c.UID, Message: fmt.Sprintf(
				"CRD %s serves %s in %v, group-versions tapp-apiserver serves: registering tapp-apiserver for them hides this CRD (docs/install.md)",
				c.Name, gr, shared)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// servedIn lists the resources served in gv.
func servedIn(served []schema.GroupVersionResource, gv schema.GroupVersion) []string {
	var out []string
	for _, r := range served {
		if r.GroupVersion() == gv {
			out = append(out, r.Resource)
		}
	}
	slices.Sort(out)
	return out
}

// Watcher watches the cluster's APIServices and CRDs and runs Check whenever one of them changes.
type Watcher struct {
	Client   dynamic.Interface
	Recorder record.EventRecorder
	Served   []schema.GroupVersionResource
	Own      types.NamespacedName

	reported sets.Set[string]
}

// Run watches until ctx is done. It reports each finding once, when it appears, and logs when it is gone.
func (w *Watcher) Run(ctx context.Context) {
	w.reported = sets.New[string]()
	factory := dynamicinformer.NewDynamicSharedInformerFactory(w.Client, 30*time.Minute)
	apiServices, crds := factory.ForResource(apiServicesGVR), factory.ForResource(crdsGVR)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	// Every change leads to one check of the whole picture.
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { queue.Add("check") },
		UpdateFunc: func(_, _ interface{}) { queue.Add("check") },
		DeleteFunc: func(interface{}) { queue.Add("check") },
	}
	for _, inf := range []informers.GenericInformer{apiServices, crds} {
		if _, err := inf.Informer().AddEventHandler(handler); err != nil {
			klog.ErrorS(err, "Cannot watch for other servers of our resources")
			return
		}
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), apiServices.Informer().HasSynced, crds.Informer().HasSynced) {
		return
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		w.check(apiServices.Lister(), crds.Lister())
		queue.Done(key)
	}
}

func (w *Watcher) check(apiServiceLister, crdLister cache.GenericLister) {
	apiServices, err := apiServiceLister.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Cannot list APIServices")
		return
	}
	crds, err := crdLister.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Cannot list CustomResourceDefinitions")
		return
	}
	current := sets.New[string]()
	for _, f := range Check(w.Served, w.Own, toAPIServices(apiServices), toCRDs(crds)) {
		key := f.Kind + "/" + f.Name + ": " + f.Message
		current.Insert(key)
		if w.reported.Has(key) {
			continue
		}
		klog.Warningf("%s", f.Message)
		w.Recorder.Event(&corev1.ObjectReference{
			Kind: f.Kind, APIVersion: apiVersionOf(f.Kind), Name: f.Name, UID: f.UID,
		}, corev1.EventTypeWarning, Reason, f.Message)
	}
	for _, key := range sets.List(w.reported.Difference(current)) {
		klog.InfoS("No longer served elsewhere", "finding", key)
	}
	w.reported = current
}

func apiVersionOf(kind string) string {
	if kind == "APIService" {
		return apiServicesGVR.GroupVersion().String()
	}
	return crdsGVR.GroupVersion().String()
}

func toAPIServices(objs []runtime.Object) []APIService {
	out := make([]APIService, 0, len(objs))
	for _, obj := range objs {
		item, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		a := APIService{Name: item.GetName(), UID: item.GetUID()}
		a.Group, _, _ = unstructured.NestedString(item.Object, "spec", "group")
		a.Version, _, _ = unstructured.NestedString(item.Object, "spec", "version")
		if svc, ok, _ := unstructured.NestedMap(item.Object, "spec", "service"); ok && svc != nil {
			ns, _, _ := unstructured.NestedString(svc, "namespace")
			name, _, _ := unstructured.NestedString(svc, "name")
			a.Service = &types.NamespacedName{Namespace: ns, Name: name}
		}
		out = append(out, a)
	}
	return out
}

func toCRDs(objs []runtime.Object) []CRD {
	out := make([]CRD, 0, len(objs))
	for _, obj := range objs {
		item, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		c := CRD{Name: item.GetName(), UID: item.GetUID()}
		c.Group, _, _ = unstructured.NestedString(item.Object, "spec", "group")
		c.Plural, _, _ = unstructured.NestedString(item.Object, "spec", "names", "plural")
		versions, _, _ := unstructured.NestedSlice(item.Object, "spec", "versions")
		for _, v := range versions {
			m, ok := v.(map[string]interface{})
			if !ok {
				continue
			}
			if served, _, _ := unstructured.NestedBool(m, "served"); !served {
				continue
			}
			if name, _, _ := unstructured.NestedString(m, "name"); name != "" {
				c.Versions = append(c.Versions, name)
			}
		}
		out = append(out, c)
	}
	return out
}
