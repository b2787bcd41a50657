package storagefence

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func TestOrphans(t *testing.T) {
	n := 0
	owned := func(apiVersion, kind string, uid types.UID) metav1.ObjectMeta {
		n++
		return metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("obj-%d", n), OwnerReferences: []metav1.OwnerReference{
			{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: uid},
		}}
	}
	objects := []runtime.Object{
		&corev1.Pod{ObjectMeta: owned("apps.tkestack.io/v1", "TApp", "kept")},
		&corev1.Pod{ObjectMeta: owned("apps.tkestack.io/v1", "TApp", "lost")},
		&corev1.Pod{ObjectMeta: owned("apps/v1", "ReplicaSet", "rs")},
		&corev1.Pod{ObjectMeta: owned("example.com/v1", "TApp", "lost")}, // another group's TApp
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unowned"}},
		&appsv1.Deployment{ObjectMeta: owned("apps.openyurt.io/v1alpha1", "YurtAppDaemon", "lost-yad")},
		&appsv1.StatefulSet{ObjectMeta: owned("apps.openyurt.io/v1alpha1", "YurtAppDaemon", "kept-yad")},
		&appsv1.ControllerRevision{ObjectMeta: owned("apps.tkestack.io/v1", "TApp", "lost")},
		&appsv1.Deployment{ObjectMeta: owned("apps.openyurt.io/v1beta1", "YurtAppSet", "lost-yas")},
		&appsv1.StatefulSet{ObjectMeta: owned("apps.openyurt.io/v1beta1", "YurtAppSet", "kept-yas")},
	}
	stored := []StoredObject{
		{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", UID: "kept"},
		{APIVersion: "apps.openyurt.io/v1alpha1", Kind: "YurtAppDaemon", UID: "kept-yad"},
		{APIVersion: "apps.openyurt.io/v1beta1", Kind: "YurtAppSet", UID: "kept-yas"},
	}
	got, err := Orphans(context.Background(), fake.NewClientset(objects...), stored)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"pods": 1, "deployments": 2, "controllerrevisions": 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Orphans = %v, want %v", got, want)
	}
}
