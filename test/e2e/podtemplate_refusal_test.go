//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/admission/podtemplate/refusal"
)

// TestPodTemplateRefusalClasses provokes every class of refusal that TAppPodTemplateDryRun tells apart with
// real dry-run pod creates against kube-apiserver, and checks that refusal.Classify sorts the real answer as
// the plugin needs: what the status reason, causes and details say, and the messages where they say nothing.
func TestPodTemplateRefusalClasses(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "refusal")
	waitDefaultServiceAccount(t, ns)

	// A ResourceQuota demanding cpu limits.
	ctx := testContext(t, 60*time.Second)
	newQuota(t, ns, "compute", corev1.ResourceLimitsCPU, "4")

	// A LimitRange allowing at most 1 cpu per container (in a namespace of its own: its max is also the
	// default limit, which would satisfy the quota above).
	limitedNS := newNamespace(t, "refusal-limits")
	waitDefaultServiceAccount(t, limitedNS)
	if _, err := kubeClient.CoreV1().LimitRanges(limitedNS).Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "max-cpu"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer,
			Max:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A namespace whose pods count is exhausted.
	full := newNamespace(t, "refusal-full")
	waitDefaultServiceAccount(t, full)
	newQuota(t, full, "no-pods", corev1.ResourcePods, "0")

	// A namespace kept terminating by a finalizer on an object in it.
	terminating := newTerminatingNamespace(t)

	// A namespace that enforces the restricted Pod Security level.
	restricted := newNamespace(t, "refusal-restricted")
	waitDefaultServiceAccount(t, restricted)
	mustKubectl(t, "label", "namespace", restricted, "pod-security.kubernetes.io/enforce=restricted")

	// A client this server's RBAC gives nothing.
	nobodyConfig := rest.CopyConfig(cluster.AdminConfig)
	nobodyConfig.Impersonate = rest.ImpersonationConfig{UserName: "e2e-nobody-" + rand.String(5)}
	nobody, err := kubernetes.NewForConfig(nobodyConfig)
	if err != nil {
		t.Fatal(err)
	}

	limited := func(cpu string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
	}
	tests := []struct {
		name      string
		client    kubernetes.Interface
		namespace string
		mutate    func(*corev1.Pod)
		want      refusal.Class
	}{
		{name: "created", namespace: ns, mutate: limited("500m"), want: refusal.Created},
		{name: "quota needs limits", namespace: ns, want: refusal.Refused},
		{name: "LimitRange maximum", namespace: limitedNS, mutate: limited("2"), want: refusal.Refused},
		{name: "validation", namespace: ns, mutate: func(p *corev1.Pod) {
			limited("500m")(p)
			p.Spec.Containers[0].Image = ""
		}, want: refusal.Invalid},
		{name: "missing service account", namespace: ns, mutate: func(p *corev1.Pod) {
			limited("500m")(p)
			p.Spec.ServiceAccountName = "no-such-account"
		}, want: refusal.MissingServiceAccount},
		{name: "missing priority class", namespace: ns, mutate: func(p *corev1.Pod) {
			limited("500m")(p)
			p.Spec.PriorityClassName = "no-such-priority"
		}, want: refusal.MissingReference},
		{name: "missing runtime class", namespace: ns, mutate: func(p *corev1.Pod) {
			limited("500m")(p)
			name := "no-such-runtime"
			p.Spec.RuntimeClassName = &name
		}, want: refusal.MissingReference},
		{name: "exceeded quota", namespace: full, want: refusal.UsageQuota},
		{name: "PodSecurity", namespace: restricted, want: refusal.Refused},
		{name: "terminating namespace", namespace: terminating, want: refusal.NamespaceTerminating},
		{name: "missing namespace", namespace: "e2e-refusal-never-" + rand.String(5), want: refusal.NamespaceNotFound},
		{name: "authorization denial", client: nobody, namespace: ns, want: refusal.AuthorizationDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := tt.client
			if client == nil {
				client = kubeClient
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "web-"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}}},
			}
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			// The admission plugins read namespaces, limit ranges and quotas from informers: give them a moment
			// to see the objects made above.
			eventually(t, 20*time.Second, "the answer to be classified "+tt.want.String(), func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, err := client.CoreV1().Pods(tt.namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				r := refusal.Classify(err)
				if r.Class != tt.want {
					return fmt.Errorf("Classify = %v, want %v; the core API answered %s", r.Class, tt.want, describe(err))
				}
				t.Logf("%v: %s", r.Class, describe(err))
				return nil
			})
		})
	}
}

// describe shows the status of an API error as the classifier sees it.
func describe(err error) string {
	if err == nil {
		return "nothing (created)"
	}
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		return fmt.Sprintf("%d %s %q details=%+v", st.Code, st.Reason, st.Message, st.Details)
	}
	return err.Error()
}

// newQuota creates a ResourceQuota with one hard limit in ns and waits until the quota controller has
// written its status: until then the quota plugin refuses pods with "status unknown for quota".
func newQuota(t *testing.T, ns, quotaName string, name corev1.ResourceName, hard string) {
	t.Helper()
	ctx := testContext(t, 30*time.Second)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quotaName},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{name: resource.MustParse(hard)}},
	}
	if _, err := kubeClient.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "status of quota "+ns+"/"+quotaName, func() error {
		q, err := kubeClient.CoreV1().ResourceQuotas(ns).Get(ctx, quota.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(q.Status.Hard) == 0 {
			return errors.New("no status yet")
		}
		return nil
	})
}

// newTerminatingNamespace returns a namespace that is being deleted and stays so until the test ends: a
// ConfigMap in it has a finalizer nobody removes before then.
func newTerminatingNamespace(t *testing.T) string {
	t.Helper()
	ns := newNamespace(t, "refusal-terminating")
	ctx := testContext(t, 60*time.Second)
	const finalizer = "e2e.tapp.io/hold"
	if _, err := kubeClient.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "hold", Finalizers: []string{finalizer}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = kubeClient.CoreV1().ConfigMaps(ns).Patch(ctx, "hold", "application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := kubeClient.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "namespace "+ns+" to be terminating", func() error {
		n, err := kubeClient.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Status.Phase != corev1.NamespaceTerminating {
			return fmt.Errorf("phase %s", n.Status.Phase)
		}
		return nil
	})
	return ns
}
