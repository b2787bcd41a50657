//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}}},
	}
}

// namespaceConditions describes a namespace's status, for failure messages.
func namespaceConditions(ctx context.Context, name string) string {
	ns, err := kubeClient.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, c := range ns.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return fmt.Sprintf("phase %s, conditions %s", ns.Status.Phase, strings.Join(out, "; "))
}

// TestNamespaceDeletion deletes a namespace holding TApps and YurtAppDaemons: the namespace controller
// discovers both groups through the aggregator, deletes their objects, and the namespace goes away.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "nsdelete")
	mustKubectl(t, "apply", "-n", ns, "-f", repoPath("artifacts", "examples", "tapp.yaml"))
	mustKubectlIn(t, webTApp, "apply", "-n", ns, "-f", "-")
	mustKubectl(t, "apply", "-n", ns, "-f", repoPath("artifacts", "examples", "yurtappdaemon.yaml"))
	// A ConfigMap with a finalizer holds the namespace in Terminating while the test looks at it.
	mustKubectlIn(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: hold
  finalizers: [e2e.tapp.io/hold]
`, "apply", "-n", ns, "-f", "-")
	t.Cleanup(func() {
		_, _ = kubectl(t, "patch", "-n", ns, "configmap", "hold", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})

	ctx := testContext(t, 90*time.Second)
	mustKubectl(t, "delete", "namespace", ns, "--wait=false")

	eventually(t, 60*time.Second, "the namespace controller deletes the TApps and YurtAppDaemons", func() error {
		out, err := kubectl(t, "get", "tapps,yurtappdaemons", "-n", ns, "-o", "name")
		if err != nil {
			return err
		}
		if out != "" {
			return fmt.Errorf("left: %s; namespace: %s", out, namespaceConditions(ctx, ns))
		}
		return nil
	})

	// Admission refuses new objects in a terminating namespace.
	_, err := kubectlIn(t, []byte(tappManifest("late", 1)), "create", "-n", ns, "-f", "-")
	if err == nil || !strings.Contains(err.Error(), "Forbidden") || !strings.Contains(err.Error(), "being terminated") {
		t.Errorf("creating a TApp in a terminating namespace: err = %v, want Forbidden, being terminated", err)
	}

	mustKubectl(t, "patch", "-n", ns, "configmap", "hold", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	eventually(t, 60*time.Second, "the namespace is gone", func() error {
		_, err := kubeClient.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: %s", namespaceConditions(ctx, ns))
	})
}

// TestGarbageCollection checks that kube-controller-manager's garbage collector follows owner references to
// TApps: background, foreground and orphan deletion.
func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "gc")
	ctx := testContext(t, 2*time.Minute)
	tapps := tappClient.TKEStackAppsV1().TApps(ns)
	configMaps := kubeClient.CoreV1().ConfigMaps(ns)

	// newOwned creates a TApp and a ConfigMap owned by it.
	newOwned := func(t *testing.T, name string, block bool) *tkestackv1.TApp {
		t.Helper()
		tapp, err := tapps.Create(ctx, &tkestackv1.TApp{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       tkestackv1.TAppSpec{Replicas: 1, Template: podTemplate(name)},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ref := metav1.OwnerReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: tapp.Name, UID: tapp.UID}
		if block {
			ref.BlockOwnerDeletion = ptr.To(true)
		}
		if _, err := configMaps.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-config", OwnerReferences: []metav1.OwnerReference{ref}},
			Data:       map[string]string{"owner": name},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return tapp
	}
	configMapGone := func(name string) func() error {
		return func() error {
			cm, err := configMaps.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("ConfigMap %s still exists (deletionTimestamp %v)", name, cm.DeletionTimestamp)
		}
	}
	tappGone := func(name string) func() error {
		return func() error {
			tapp, err := tapps.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("TApp %s still exists (deletionTimestamp %v, finalizers %v)", name, tapp.DeletionTimestamp, tapp.Finalizers)
		}
	}

	t.Run("background", func(t *testing.T) {
		newOwned(t, "background", false)
		if err := tapps.Delete(ctx, "background", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "the garbage collector deletes the ConfigMap of a deleted TApp", configMapGone("background-config"))
	})

	t.Run("foreground", func(t *testing.T) {
		newOwned(t, "foreground", true)
		if err := tapps.Delete(ctx, "foreground", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "the garbage collector deletes the ConfigMap", configMapGone("foreground-config"))
		eventually(t, 60*time.Second, "the TApp goes once its dependents are gone", tappGone("foreground"))
	})

	t.Run("orphan", func(t *testing.T) {
		newOwned(t, "orphan", false)
		// The collector orphans only the dependents its graph already holds; one it learns of after the
		// owner is gone has a missing owner and is deleted. Give its ConfigMap watch a moment first.
		time.Sleep(2 * time.Second)
		if err := tapps.Delete(ctx, "orphan", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "the TApp goes after its dependents are orphaned", tappGone("orphan"))
		cm, err := configMaps.Get(ctx, "orphan-config", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the orphaned ConfigMap: %v", err)
		}
		if len(cm.OwnerReferences) != 0 {
			t.Errorf("the orphaned ConfigMap still has owner references %v", cm.OwnerReferences)
		}
	})

	t.Run("owner that does not exist", func(t *testing.T) {
		// A dependent whose owner uid never existed is collected too (the collector asks the TApp API).
		if _, err := configMaps.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "dangling", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "never", UID: types.UID("00000000-0000-0000-0000-000000000001"),
			}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "the garbage collector deletes a ConfigMap whose TApp owner does not exist", configMapGone("dangling"))
	})
}
