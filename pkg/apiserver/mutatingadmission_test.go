package apiserver

import (
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestMutatingAdmissionAbsent(t *testing.T) {
	if !mutatingAdmissionAbsent(nil)() {
		t.Errorf("without informers (standalone) = false, want true")
	}
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	absent := mutatingAdmissionAbsent(factory)
	if absent() {
		t.Errorf("before the informers synced = true, want false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if !absent() {
		t.Errorf("with no webhook or policy = false, want true")
	}
	webhooks := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := webhooks.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, absent, false, "with a mutating webhook configuration")
	if err := webhooks.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, absent, true, "after the webhook configuration was deleted")
	policies := client.AdmissionregistrationV1().MutatingAdmissionPolicies()
	if _, err := policies.Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, absent, false, "with a mutating admission policy")
}

func waitFor(t *testing.T, absent func() bool, want bool, what string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return absent() == want, nil })
	if err != nil {
		t.Errorf("%s: mutatingAdmissionAbsent = %v, want %v", what, !want, want)
	}
}
