package yurtconvert

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	yaspolicy "github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
	yurtfake "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
)

// cluster is a fake API: creating the YurtAppSet (not as a dry run) gives it a UID and, like its
// controller, adopts the orphans labelled for it; failCreate makes the next real create fail.
type cluster struct {
	kube       *kubefake.Clientset
	yurt       *yurtfake.Clientset
	failCreate bool
}

func newCluster(t *testing.T) *cluster {
	yad := newYAD()
	pools := testPools()
	live := children(t, yad, pools)
	var objs []runtime.Object
	for _, d := range live.Deployments {
		objs = append(objs, d)
	}
	c := &cluster{kube: kubefake.NewSimpleClientset(objs...)}
	yurtObjs := []runtime.Object{yad}
	for _, p := range pools {
		yurtObjs = append(yurtObjs, p)
	}
	c.yurt = yurtfake.NewSimpleClientset(yurtObjs...)
	c.yurt.PrependReactor("create", "yurtappsets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create := action.(k8stesting.CreateActionImpl)
		yas := create.GetObject().(*v1beta1.YurtAppSet).DeepCopy()
		if len(create.CreateOptions.DryRun) > 0 {
			return true, yas, nil
		}
		if c.failCreate {
			c.failCreate = false
			return true, nil, apierrors.NewServiceUnavailable("etcd is away")
		}
		yas.UID = "yas-uid"
		if err := c.yurt.Tracker().Create(schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1beta1", Resource: "yurtappsets"}, yas, yas.Namespace); err != nil {
			return true, nil, err
		}
		// the garbage collector has orphaned the workloads; the controller adopts them
		ds, _ := c.kube.AppsV1().Deployments(yas.Namespace).List(context.Background(), metav1.ListOptions{})
		for i := range ds.Items {
			d := &ds.Items[i]
			if d.Labels[openyurt.YurtAppSetOwnerLabel] == yas.Name {
				d.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(yas, yaspolicy.ControllerKind)}
				if _, err := c.kube.AppsV1().Deployments(yas.Namespace).Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
					return true, nil, err
				}
			}
		}
		return true, yas, nil
	})
	return c
}

func (c *cluster) converter(backup string, out *bytes.Buffer) *Converter {
	return &Converter{Kube: c.kube, Yurt: c.yurt, Out: out, BackupFile: backup, Timeout: 5 * time.Second, Interval: time.Millisecond}
}

// writes lists the writes of both clientsets in order, as "verb resource/name".
func writes(c *cluster) []string {
	var out []string
	for _, a := range append(c.kube.Actions(), c.yurt.Actions()...) {
		switch a := a.(type) {
		case k8stesting.PatchActionImpl:
			out = append(out, fmt.Sprintf("patch %s/%s", a.GetResource().Resource, a.GetName()))
		case k8stesting.DeleteActionImpl:
			out = append(out, fmt.Sprintf("delete %s/%s propagation=%s uid=%s", a.GetResource().Resource, a.GetName(),
				*a.DeleteOptions.PropagationPolicy, *a.DeleteOptions.Preconditions.UID))
		case k8stesting.CreateActionImpl:
			out = append(out, fmt.Sprintf("create %s dryRun=%v", a.GetResource().Resource, a.CreateOptions.DryRun))
		}
	}
	return out
}

func TestConvertStepsAndResumption(t *testing.T) {
	c := newCluster(t)
	backup := filepath.Join(t.TempDir(), "ns-web.yurtappdaemon.yaml")
	var out bytes.Buffer

	// The first run stops at the YurtAppSet's create: the YurtAppDaemon is already gone.
	c.failCreate = true
	if _, err := c.converter(backup, &out).Run(context.Background(), "ns", "web"); err == nil || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("want a failed create telling to resume, got %v", err)
	}
	// Kube actions first (patches), then yurt actions (dry run, delete, create): the order across the two
	// clientsets is fixed by the output below.
	want := []string{
		"patch deployments/web-beijing", "patch deployments/web-hangzhou",
		"create yurtappsets dryRun=[All]",
		"delete yurtappdaemons/web propagation=Orphan uid=yad-uid",
		"create yurtappsets dryRun=[]",
	}
	if got := writes(c); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	steps := []string{"checked: the YurtAppSet renders the same workloads as the YurtAppDaemon in 2 pool(s); 2 workload(s) to hand over",
		"backup: YurtAppDaemon ns/web written to " + backup,
		"labelled Deployment ns/web-beijing apps.openyurt.io/ref-yurtappset=web (pool beijing)",
		"labelled Deployment ns/web-hangzhou apps.openyurt.io/ref-yurtappset=web (pool hangzhou)",
		"deleted YurtAppDaemon ns/web (orphan propagation: its workloads and ControllerRevisions stay)"}
	if got := strings.TrimSpace(out.String()); got != strings.Join(steps, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", got, strings.Join(steps, "\n"))
	}
	if _, err := os.Stat(backup); err != nil {
		t.Fatalf("no backup file: %v", err)
	}
	// The fake has no garbage collector: orphan the workloads as it would.
	ds, _ := c.kube.AppsV1().Deployments("ns").List(context.Background(), metav1.ListOptions{})
	for i := range ds.Items {
		ds.Items[i].OwnerReferences = nil
		if _, err := c.kube.AppsV1().Deployments("ns").Update(context.Background(), &ds.Items[i], metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The re-run reads the backup, relabels (idempotent), creates and sees both adopted.
	c.kube.ClearActions()
	c.yurt.ClearActions()
	out.Reset()
	yas, err := c.converter(backup, &out).Run(context.Background(), "ns", "web")
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, out.String())
	}
	if yas.UID != "yas-uid" || yas.Annotations[ConvertedFromAnnotation] != "yad-uid" {
		t.Errorf("YurtAppSet %+v", yas.ObjectMeta)
	}
	want = []string{"patch deployments/web-beijing", "patch deployments/web-hangzhou",
		"create yurtappsets dryRun=[All]", "create yurtappsets dryRun=[]"}
	if got := writes(c); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, line := range []string{"YurtAppDaemon ns/web is gone: resuming from " + backup,
		"adopted Deployment ns/web-beijing (pool beijing, UID uid-beijing unchanged)",
		"adopted Deployment ns/web-hangzhou (pool hangzhou, UID uid-hangzhou unchanged)",
		"done: YurtAppSet ns/web controls 2 workload(s); no workload was recreated"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}

	// A third run finds its own YurtAppSet and writes nothing but the idempotent labels.
	c.kube.ClearActions()
	c.yurt.ClearActions()
	out.Reset()
	if _, err := c.converter(backup, &out).Run(context.Background(), "ns", "web"); err != nil {
		t.Fatalf("third run: %v", err)
	}
	if !strings.Contains(out.String(), "created by an earlier run: resuming") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, w := range writes(c) {
		if !strings.HasPrefix(w, "patch deployments/") {
			t.Errorf("third run wrote %s", w)
		}
	}
}

func TestConvertRefusesWithoutWriting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, c *cluster)
		want  string
	}{
		{"a YurtAppSet of that name that the conversion did not make", func(t *testing.T, c *cluster) {
			yas := &v1beta1.YurtAppSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "other"}}
			if err := c.yurt.Tracker().Add(yas); err != nil {
				t.Fatal(err)
			}
		}, "exists and was not made from this YurtAppDaemon"},
		{"a workload whose pods would be replaced", func(t *testing.T, c *cluster) {
			d, _ := c.kube.AppsV1().Deployments("ns").Get(context.Background(), "web-beijing", metav1.GetOptions{})
			d.Spec.Template.Spec.Containers[0].Image = "nginx:hotfix"
			if _, err := c.kube.AppsV1().Deployments("ns").Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, "its pods would be replaced"},
		{"the kind is not served", func(t *testing.T, c *cluster) {
			c.yurt.PrependReactor("create", "yurtappsets", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps.openyurt.io", Resource: "yurtappsets"}, "")
			})
		}, "does not serve YurtAppSet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			tc.setup(t, c)
			c.kube.ClearActions()
			c.yurt.ClearActions()
			backup := filepath.Join(t.TempDir(), "b.yaml")
			var out bytes.Buffer
			_, err := c.converter(backup, &out).Run(context.Background(), "ns", "web")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing changed") {
				t.Fatalf("want a refusal with %q, got %v", tc.want, err)
			}
			for _, w := range writes(c) {
				if !strings.Contains(w, "dryRun=[All]") {
					t.Errorf("refused run wrote %s", w)
				}
			}
			if _, err := os.Stat(backup); err == nil {
				t.Error("refused run wrote a backup file")
			}
		})
	}
}
