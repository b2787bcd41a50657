package integration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPersistence restarts the server on the same etcd data directory and finds the objects again.
func TestPersistence(t *testing.T) {
	dataDir := t.TempDir()

	first := startServer(t, dataDir)
	cs := clientset(t, first)
	ctx := testContext(t)
	tapp, err := cs.TKEStackAppsV1().TApps("persist").Create(ctx, newTApp("persist", "kept", 4), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create tapp: %v", err)
	}
	tapp.Status.Replicas = 4
	tapp.Status.AppStatus = "Running"
	if tapp, err = cs.TKEStackAppsV1().TApps("persist").UpdateStatus(ctx, tapp, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update tapp status: %v", err)
	}
	pool, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, newNodePool("kept-pool"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create nodepool: %v", err)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("stopping the first server: %v", err)
	}

	second := startServer(t, dataDir)
	if second.URL == first.URL {
		t.Logf("second server reuses port of the first: %s", second.URL)
	}
	cs = clientset(t, second)
	gotTApp, err := cs.TKEStackAppsV1().TApps("persist").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get tapp after restart: %v", err)
	}
	if gotTApp.UID != tapp.UID {
		t.Errorf("tapp uid after restart = %s, want %s", gotTApp.UID, tapp.UID)
	}
	if gotTApp.Spec.Replicas != 4 || gotTApp.Status.AppStatus != "Running" || gotTApp.Generation != 1 {
		t.Errorf("tapp after restart replicas=%d appStatus=%q generation=%d, want 4, Running, 1",
			gotTApp.Spec.Replicas, gotTApp.Status.AppStatus, gotTApp.Generation)
	}
	if gotTApp.ResourceVersion != tapp.ResourceVersion {
		t.Errorf("tapp resourceVersion after restart = %s, want %s", gotTApp.ResourceVersion, tapp.ResourceVersion)
	}
	gotPool, err := cs.OpenYurtAppsV1alpha1().NodePools().Get(ctx, "kept-pool", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get nodepool after restart: %v", err)
	}
	if gotPool.UID != pool.UID || gotPool.Spec.Type != "Edge" {
		t.Errorf("nodepool after restart uid=%s type=%s, want %s and Edge", gotPool.UID, gotPool.Spec.Type, pool.UID)
	}

	// The restarted server keeps working: writes land and bump the resourceVersion.
	gotTApp.Spec.Replicas = 5
	updated, err := cs.TKEStackAppsV1().TApps("persist").Update(ctx, gotTApp, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update after restart: %v", err)
	}
	if updated.Generation != 2 || updated.ResourceVersion == tapp.ResourceVersion {
		t.Errorf("update after restart generation=%d rv=%s, want 2 and a new resourceVersion", updated.Generation, updated.ResourceVersion)
	}
}
