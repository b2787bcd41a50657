package controllertest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

func TestStampWrites(t *testing.T) {
	client := kubefake.NewClientset()
	StampWrites(&client.Fake)
	ctx := context.Background()
	pods := client.CoreV1().Pods("ns")
	a, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "given"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.UID == "" || b.UID != "given" || a.ResourceVersion == "" || a.ResourceVersion == b.ResourceVersion {
		t.Errorf("created %q/%q and %q/%q: want a UID when none is given and a new resourceVersion each", a.UID, a.ResourceVersion, b.UID, b.ResourceVersion)
	}
	if a.CreationTimestamp.IsZero() || !b.CreationTimestamp.After(a.CreationTimestamp.Time) {
		t.Errorf("creation timestamps %v, %v: want increasing", a.CreationTimestamp, b.CreationTimestamp)
	}
	updated, err := pods.Update(ctx, a, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == a.ResourceVersion || updated.ResourceVersion == b.ResourceVersion {
		t.Errorf("update kept resourceVersion %q", updated.ResourceVersion)
	}
}
