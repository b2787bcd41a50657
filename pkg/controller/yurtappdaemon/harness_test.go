package yurtappdaemon

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/controllertest"
	yurtfake "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions"
)

// harness is a YurtAppDaemon controller over fake clientsets. The informer caches are filled by hand
// (show copies what the fake APIs hold into them), so each test decides when the caches catch up.
type harness struct {
	t        *testing.T
	ctrl     *Controller
	kube     *kubefake.Clientset
	yurt     *yurtfake.Clientset
	kubeInf  informers.SharedInformerFactory
	yurtInf  externalversions.SharedInformerFactory
	recorder *record.FakeRecorder
	// clock is the controller's clock; it moves only when a test steps it.
	clock *clocktesting.FakeClock
}

func newHarness(t *testing.T, yurtObjs []runtime.Object, kubeObjs ...runtime.Object) *harness {
	t.Helper()
	h := &harness{
		t:    t,
		kube: kubefake.NewClientset(kubeObjs...),
		// The plain tracker: the fake's server-side-apply tracker has no schema for our types, and the
		// controller never applies.
		yurt:     yurtfake.NewSimpleClientset(yurtObjs...), //nolint:staticcheck
		recorder: record.NewFakeRecorder(1000),
		clock:    clocktesting.NewFakeClock(time.Now()),
	}
	controllertest.StampWrites(&h.kube.Fake)
	controllertest.StampWrites(&h.yurt.Fake)
	h.kubeInf = informers.NewSharedInformerFactory(h.kube, 0)
	h.yurtInf = externalversions.NewSharedInformerFactory(h.yurt, 0)
	h.ctrl = h.newController(h.clock)
	h.show()
	return h
}

// newController builds a controller timed by clk over the harness's clientsets and informers.
func (h *harness) newController(clk clock.WithTicker) *Controller {
	h.t.Helper()
	ctrl, err := NewController(h.kube, h.yurt,
		h.yurtInf.OpenYurtApps().V1alpha1().YurtAppDaemons(), h.yurtInf.OpenYurtApps().V1alpha1().NodePools(),
		h.kubeInf.Apps().V1().Deployments(), h.kubeInf.Apps().V1().StatefulSets(), h.kubeInf.Apps().V1().ControllerRevisions(),
		h.recorder, clk)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(ctrl.queue.ShutDown)
	return ctrl
}

// show replaces every informer cache with what the fake APIs hold (the caches catching up).
func (h *harness) show() {
	h.t.Helper()
	ctx := context.Background()
	yads, err := h.yurt.OpenYurtAppsV1alpha1().YurtAppDaemons("").List(ctx, metav1.ListOptions{})
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
	for i := range yads.Items {
		objs = append(objs, &yads.Items[i])
	}
	h.must(h.yurtInf.OpenYurtApps().V1alpha1().YurtAppDaemons().Informer().GetIndexer().Replace(objs, "1"))
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

// sync runs one sync of ns/web.
func (h *harness) sync() error {
	return h.ctrl.sync(context.Background(), "ns/web")
}

// mustSync runs one sync of ns/web and fails on error.
func (h *harness) mustSync() {
	h.t.Helper()
	h.must(h.sync())
}

// converge alternates show and sync until a sync writes nothing (at most 5 rounds).
func (h *harness) converge() {
	h.t.Helper()
	for i := 0; i < 5; i++ {
		h.show()
		before := h.mark()
		h.mustSync()
		if len(h.writesAfter(before)) == 0 {
			h.show()
			return
		}
	}
	h.t.Fatalf("no steady state after 5 syncs; writes: %v", h.writes())
}

// writes lists every write action on both fake APIs as "verb resource[/subresource] name": the cluster's
// first, then those of the YurtAppDaemon server.
func (h *harness) writes() []string {
	return h.writesAfter(mark{})
}

// mark counts the actions of both fake APIs at one point.
type mark struct{ kube, yurt int }

func (h *harness) mark() mark {
	return mark{kube: len(h.kube.Actions()), yurt: len(h.yurt.Actions())}
}

// writesAfter lists the writes made since m.
func (h *harness) writesAfter(m mark) []string {
	var out []string
	for _, src := range []struct {
		actions []clienttesting.Action
		skip    int
	}{{h.kube.Actions(), m.kube}, {h.yurt.Actions(), m.yurt}} {
		for _, a := range src.actions[src.skip:] {
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
			}
			out = append(out, a.GetVerb()+" "+res+" "+name)
		}
	}
	return out
}

// events drains the recorded events.
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

func (h *harness) yad() *v1alpha1.YurtAppDaemon {
	h.t.Helper()
	yad, err := h.yurt.OpenYurtAppsV1alpha1().YurtAppDaemons("ns").Get(context.Background(), "web", metav1.GetOptions{})
	h.must(err)
	return yad
}

// updateYAD changes the stored YurtAppDaemon's spec and bumps its generation, as the API server does.
func (h *harness) updateYAD(change func(*v1alpha1.YurtAppDaemon)) {
	h.t.Helper()
	yad := h.yad()
	change(yad)
	yad.Generation++
	_, err := h.yurt.OpenYurtAppsV1alpha1().YurtAppDaemons("ns").Update(context.Background(), yad, metav1.UpdateOptions{})
	h.must(err)
}

func (h *harness) pool(name string) *v1alpha1.NodePool {
	h.t.Helper()
	p, err := h.yurt.OpenYurtAppsV1alpha1().NodePools().Get(context.Background(), name, metav1.GetOptions{})
	h.must(err)
	return p
}

func (h *harness) updatePool(name string, change func(*v1alpha1.NodePool)) {
	h.t.Helper()
	p := h.pool(name)
	change(p)
	_, err := h.yurt.OpenYurtAppsV1alpha1().NodePools().Update(context.Background(), p, metav1.UpdateOptions{})
	h.must(err)
}

func (h *harness) deployments() map[string]*appsv1.Deployment {
	h.t.Helper()
	list, err := h.kube.AppsV1().Deployments("ns").List(context.Background(), metav1.ListOptions{})
	h.must(err)
	out := map[string]*appsv1.Deployment{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

func (h *harness) statefulSets() map[string]*appsv1.StatefulSet {
	h.t.Helper()
	list, err := h.kube.AppsV1().StatefulSets("ns").List(context.Background(), metav1.ListOptions{})
	h.must(err)
	out := map[string]*appsv1.StatefulSet{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

func (h *harness) revisions() []*appsv1.ControllerRevision {
	h.t.Helper()
	list, err := h.kube.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
	h.must(err)
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
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

func condition(yad *v1alpha1.YurtAppDaemon, t v1alpha1.YurtAppDaemonConditionType) *v1alpha1.YurtAppDaemonCondition {
	for i := range yad.Status.Conditions {
		if yad.Status.Conditions[i].Type == t {
			return &yad.Status.Conditions[i]
		}
	}
	return nil
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

// testYAD is ns/web: pods app=web, pools labelled role=edge, a Deployment of 2 replicas of nginx:1.25.
func testYAD() *v1alpha1.YurtAppDaemon {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	return &v1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "yad-uid", Generation: 1, ResourceVersion: "1"},
		Spec: v1alpha1.YurtAppDaemonSpec{
			Selector:         sel,
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "edge"}},
			WorkloadTemplate: v1alpha1.WorkloadTemplate{DeploymentTemplate: &v1alpha1.DeploymentTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](2),
					Selector: sel.DeepCopy(),
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.25"}}},
					},
				},
			}},
			RevisionHistoryLimit: ptr.To[int32](10),
		},
	}
}

// withStatefulSet switches the template of yad to a StatefulSet with the same pod template.
func withStatefulSet(yad *v1alpha1.YurtAppDaemon) *v1alpha1.YurtAppDaemon {
	d := yad.Spec.WorkloadTemplate.DeploymentTemplate
	yad.Spec.WorkloadTemplate = v1alpha1.WorkloadTemplate{StatefulSetTemplate: &v1alpha1.StatefulSetTemplateSpec{
		ObjectMeta: d.ObjectMeta,
		Spec:       appsv1.StatefulSetSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, ServiceName: "web", Template: d.Spec.Template},
	}}
	return yad
}

func testPool(name, role string, taints ...corev1.Taint) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"role": role}, ResourceVersion: "1"},
		Spec:       v1alpha1.NodePoolSpec{Type: "Edge", Taints: taints},
	}
}

func objs(o ...runtime.Object) []runtime.Object { return o }

func everything() labels.Selector { return labels.Everything() }
