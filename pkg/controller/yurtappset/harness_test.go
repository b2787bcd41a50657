package yurtappset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/controllertest"
	yurtfake "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions"
)

// harness is a YurtAppSet controller over fake clientsets whose informer caches are filled by hand (show),
// so each test decides when the caches catch up. The fake cluster names objects created with
// generateName as the API server does.
type harness struct {
	t        *testing.T
	ctrl     *Controller
	kube     *kubefake.Clientset
	yurt     *yurtfake.Clientset
	kubeInf  informers.SharedInformerFactory
	yurtInf  externalversions.SharedInformerFactory
	recorder *record.FakeRecorder
}

func newHarness(t *testing.T, yurtObjs []runtime.Object, kubeObjs ...runtime.Object) *harness {
	t.Helper()
	h := &harness{
		t:        t,
		kube:     kubefake.NewClientset(kubeObjs...),
		yurt:     yurtfake.NewSimpleClientset(yurtObjs...), //nolint:staticcheck // the plain tracker: no SSA schema for our types
		recorder: record.NewFakeRecorder(1000),
	}
	controllertest.StampWrites(&h.kube.Fake)
	controllertest.StampWrites(&h.yurt.Fake)
	generated := 0
	h.kube.PrependReactor("create", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if m, ok := action.(clienttesting.CreateAction).GetObject().(metav1.Object); ok && m.GetName() == "" && m.GetGenerateName() != "" {
			generated++
			m.SetName(fmt.Sprintf("%sg%04d", m.GetGenerateName(), generated))
		}
		return false, nil, nil
	})
	h.kubeInf = informers.NewSharedInformerFactory(h.kube, 0)
	h.yurtInf = externalversions.NewSharedInformerFactory(h.yurt, 0)
	ctrl, err := NewController(h.kube, h.yurt,
		h.yurtInf.OpenYurtApps().V1beta1().YurtAppSets(), h.yurtInf.OpenYurtApps().V1alpha1().NodePools(),
		h.kubeInf.Apps().V1().Deployments(), h.kubeInf.Apps().V1().StatefulSets(), h.kubeInf.Apps().V1().ControllerRevisions(),
		h.recorder, clocktesting.NewFakeClock(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctrl.queue.ShutDown)
	h.ctrl = ctrl
	h.show()
	return h
}

// show replaces every informer cache with what the fake APIs hold.
func (h *harness) show() {
	h.t.Helper()
	ctx := context.Background()
	sets, err := h.yurt.OpenYurtAppsV1beta1().YurtAppSets("").List(ctx, metav1.ListOptions{})
	h.must(err)
	pools, err := h.yurt.OpenYurtAppsV1alpha1().NodePools().List(ctx, metav1.ListOptions{})
	h.must(err)
	deps, err := h.kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	h.must(err)
	stss, err := h.kube.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
	h.must(err)
	revs, err := h.kube.AppsV1().ControllerRevisions("").List(ctx, metav1.ListOptions{})
	h.must(err)
	var objs []any
	for i := range sets.Items {
		objs = append(objs, &sets.Items[i])
	}
	h.must(h.yurtInf.OpenYurtApps().V1beta1().YurtAppSets().Informer().GetIndexer().Replace(objs, "1"))
	objs = nil
	for i := range pools.Items {
		objs = append(objs, &pools.Items[i])
	}
	h.must(h.yurtInf.OpenYurtApps().V1alpha1().NodePools().Informer().GetIndexer().Replace(objs, "1"))
	objs = nil
	for i := range deps.Items {
		objs = append(objs, &deps.Items[i])
	}
	h.must(h.kubeInf.Apps().V1().Deployments().Informer().GetIndexer().Replace(objs, "1"))
	objs = nil
	for i := range stss.Items {
		objs = append(objs, &stss.Items[i])
	}
	h.must(h.kubeInf.Apps().V1().StatefulSets().Informer().GetIndexer().Replace(objs, "1"))
	objs = nil
	for i := range revs.Items {
		objs = append(objs, &revs.Items[i])
	}
	h.must(h.kubeInf.Apps().V1().ControllerRevisions().Informer().GetIndexer().Replace(objs, "1"))
}

func (h *harness) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) sync() error { return h.ctrl.sync(context.Background(), "ns/web") }

// converge alternates show and sync until a sync writes nothing (at most 6 rounds).
func (h *harness) converge() {
	h.t.Helper()
	for i := 0; i < 6; i++ {
		h.show()
		before := len(h.writes())
		h.must(h.sync())
		if len(h.writes()) == before {
			h.show()
			return
		}
	}
	h.t.Fatalf("no steady state after 6 syncs; writes: %v", h.writes())
}

// writes lists every write on both fake APIs as "verb resource[/subresource] name".
func (h *harness) writes() []string {
	var out []string
	for _, actions := range [][]clienttesting.Action{h.kube.Actions(), h.yurt.Actions()} {
		for _, a := range actions {
			switch a.GetVerb() {
			case "get", "list", "watch":
				continue
			}
			res := a.GetResource().Resource
			if a.GetSubresource() != "" {
				res += "/" + a.GetSubresource()
			}
			name := ""
			switch x := a.(type) {
			case clienttesting.CreateAction:
				if m, ok := x.GetObject().(metav1.Object); ok {
					name = m.GetName()
				}
			case clienttesting.UpdateAction:
				if m, ok := x.GetObject().(metav1.Object); ok {
					name = m.GetName()
				}
			case clienttesting.DeleteAction:
				name = x.GetName()
			case clienttesting.PatchAction:
				name = x.GetName()
			}
			out = append(out, a.GetVerb()+" "+res+" "+name)
		}
	}
	return out
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) yas() *v1beta1.YurtAppSet {
	h.t.Helper()
	yas, err := h.yurt.OpenYurtAppsV1beta1().YurtAppSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
	h.must(err)
	return yas
}

func (h *harness) updateYAS(change func(*v1beta1.YurtAppSet)) {
	h.t.Helper()
	yas := h.yas()
	change(yas)
	yas.Generation++
	_, err := h.yurt.OpenYurtAppsV1beta1().YurtAppSets("ns").Update(context.Background(), yas, metav1.UpdateOptions{})
	h.must(err)
}

// deployments returns the Deployments of ns by pool.
func (h *harness) deployments() map[string]*appsv1.Deployment {
	h.t.Helper()
	list, err := h.kube.AppsV1().Deployments("ns").List(context.Background(), metav1.ListOptions{})
	h.must(err)
	out := map[string]*appsv1.Deployment{}
	for i := range list.Items {
		out[list.Items[i].Labels["apps.openyurt.io/pool-name"]] = &list.Items[i]
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func condition(yas *v1beta1.YurtAppSet, t v1beta1.YurtAppSetConditionType) string {
	for _, c := range yas.Status.Conditions {
		if c.Type == t {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

func requireEvent(t *testing.T, events []string, want string) {
	t.Helper()
	for _, e := range events {
		if strings.Contains(e, want) {
			return
		}
	}
	t.Errorf("no event containing %q in %q", want, events)
}

// testYAS is ns/web: pools labelled role=edge, a Deployment of 2 replicas of nginx:1.25, a replicas tweak
// of 3 for the pool beijing.
func testYAS() *v1beta1.YurtAppSet {
	labels := map[string]string{"app": "web"}
	return &v1beta1.YurtAppSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "yas-uid", Generation: 1, ResourceVersion: "1"},
		Spec: v1beta1.YurtAppSetSpec{
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "edge"}},
			Workload: v1beta1.Workload{
				WorkloadTemplate: v1beta1.WorkloadTemplate{DeploymentTemplate: &v1beta1.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: appsv1.DeploymentSpec{
						Replicas: ptr.To[int32](2),
						Selector: &metav1.LabelSelector{MatchLabels: labels},
						Template: corev1.PodTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: labels},
							Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.25"}}},
						},
					},
				}},
				WorkloadTweaks: []v1beta1.WorkloadTweak{{Pools: []string{"beijing"}, Tweaks: v1beta1.Tweaks{Replicas: ptr.To[int32](3)}}},
			},
			RevisionHistoryLimit: ptr.To[int32](2),
		},
	}
}

func testPool(name, role string) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"role": role}, ResourceVersion: "1"},
		Spec:       v1alpha1.NodePoolSpec{Type: "Edge"},
	}
}

func objs(o ...runtime.Object) []runtime.Object { return o }
