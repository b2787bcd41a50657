package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/tapp-io/tapp-apiserver/cmd/tapp-apiserver/app"
	"github.com/tapp-io/tapp-apiserver/pkg/embeddedetcd"
	"github.com/tapp-io/tapp-apiserver/pkg/storageversion"
)

const objectsPrefix = "/registry/tapp-apiserver/apps."

// storedValues opens the stopped server's embedded etcd and returns the stored objects by key.
func storedValues(t *testing.T, dataDir string) map[string][]byte {
	t.Helper()
	etcd, err := embeddedetcd.Start(embeddedetcd.Options{DataDir: dataDir, UnsafeNoFsync: true, LogLevel: "error", CertDir: t.TempDir()})
	if err != nil {
		t.Fatalf("opening the store: %v", err)
	}
	defer etcd.Stop()
	tlsConfig, err := transport.TLSInfo{CertFile: etcd.CertFile, KeyFile: etcd.KeyFile, TrustedCAFile: etcd.CAFile}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := client.Get(ctx, objectsPrefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("reading the store: %v", err)
	}
	out := map[string][]byte{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = kv.Value
	}
	return out
}

// mediaTypes says, for every stored object, whether it is stored in JSON or protobuf.
func mediaTypes(t *testing.T, values map[string][]byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for key, value := range values {
		switch {
		case bytes.HasPrefix(value, []byte("k8s\x00")):
			out[key] = "protobuf"
		case bytes.HasPrefix(value, []byte("{")):
			out[key] = "json"
		default:
			t.Fatalf("%s is stored neither in JSON nor in protobuf: %q", key, value)
		}
	}
	return out
}

func withMediaType(mediaType string) func(*app.Options) {
	return func(o *app.Options) { o.Recommended.Etcd.DefaultStorageMediaType = mediaType }
}

// TestStoreWrittenInJSON: a store written by a server that stored JSON (every version before protobuf) is
// served as it is by a server storing protobuf; each object is stored in protobuf on its next write, and
// migrate-storage rewrites the others once (a second run writes nothing).
func TestStoreWrittenInJSON(t *testing.T) {
	dataDir := t.TempDir()
	start := func(configure func(*app.Options)) *testServer {
		s, err := launchWith(dataDir, t.TempDir(), configure)
		if err != nil {
			t.Fatalf("starting tapp-apiserver: %v", err)
		}
		t.Cleanup(func() { _ = s.stop() })
		return s
	}
	stop := func(s *testServer) {
		if err := s.stop(); err != nil {
			t.Fatalf("stopping tapp-apiserver: %v", err)
		}
	}
	ctx := testContext(t)

	old := start(withMediaType(runtime.ContentTypeJSON))
	cs := clientset(t, old)
	for _, name := range []string{"written", "untouched"} {
		if _, err := cs.TKEStackAppsV1().TApps("media").Create(ctx, newTApp("media", name, 2), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating TApp %s: %v", name, err)
		}
	}
	if _, err := cs.OpenYurtAppsV1alpha1().YurtAppDaemons("media").Create(ctx, newYurtAppDaemon("media", "yad"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, newNodePool("media-pool"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop(old)
	jsonStore := mediaTypes(t, storedValues(t, dataDir))
	if len(jsonStore) != 4 {
		t.Fatalf("the store holds %d objects, want 4: %v", len(jsonStore), jsonStore)
	}
	for key, mediaType := range jsonStore {
		if mediaType != "json" {
			t.Fatalf("%s is stored in %s by a server storing JSON", key, mediaType)
		}
	}

	// The default media type is protobuf.
	current := start(nil)
	cs = clientset(t, current)
	written, err := cs.TKEStackAppsV1().TApps("media").Get(ctx, "written", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading a TApp stored in JSON: %v", err)
	}
	if written.Spec.Replicas != 2 || written.Spec.Template.Spec.Containers[0].Image != "nginx:1.7.9" {
		t.Fatalf("the TApp stored in JSON reads back as replicas %d", written.Spec.Replicas)
	}
	list, err := cs.TKEStackAppsV1().TApps("media").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("listing TApps stored in JSON: %d items, %v", len(list.Items), err)
	}
	written.Labels = map[string]string{"touched": "yes"}
	if _, err := cs.TKEStackAppsV1().TApps("media").Update(ctx, written, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating a TApp stored in JSON: %v", err)
	}
	stop(current)
	mixed := mediaTypes(t, storedValues(t, dataDir))
	for key, mediaType := range mixed {
		want := "json"
		if strings.HasSuffix(key, "/media/written") {
			want = "protobuf"
		}
		if mediaType != want {
			t.Errorf("after one update, %s is stored in %s, want %s", key, mediaType, want)
		}
	}

	// The storage-version migration rewrites the rest, and resumes from its progress file.
	current = start(nil)
	progressFile := filepath.Join(t.TempDir(), "progress.json")
	migrate := func() string {
		var out bytes.Buffer
		m := &storageversion.Migrator{
			Dynamic:      dynamic.NewForConfigOrDie(current.Config),
			Discovery:    discovery.NewDiscoveryClientForConfigOrDie(current.Config),
			ProgressFile: progressFile,
			PageSize:     1,
			Out:          &out,
		}
		if err := m.Run(ctx); err != nil {
			t.Fatalf("migrate-storage: %v\n%s", err, out.String())
		}
		return out.String()
	}
	first := migrate()
	for _, line := range []string{
		"tapps.apps.tkestack.io: 1 rewritten, 1 already current, 0 failed",
		"yurtappdaemons.apps.openyurt.io: 1 rewritten, 0 already current, 0 failed",
		"nodepools.apps.openyurt.io: 1 rewritten, 0 already current, 0 failed",
	} {
		if !strings.Contains(first, line) {
			t.Errorf("migrate-storage did not report %q:\n%s", line, first)
		}
	}
	// Four resources: tapps, yurtappdaemons, nodepools and yurtappsets (none stored here).
	if again := migrate(); strings.Count(again, "done in an earlier run") != 4 {
		t.Errorf("a second run with the progress file redid work:\n%s", again)
	}
	if err := os.Remove(progressFile); err != nil {
		t.Fatal(err)
	}
	if fresh := migrate(); strings.Count(fresh, "0 rewritten") != 4 {
		t.Errorf("a fresh run over a migrated store rewrote objects:\n%s", fresh)
	}
	stop(current)
	for key, mediaType := range mediaTypes(t, storedValues(t, dataDir)) {
		if mediaType != "protobuf" {
			t.Errorf("after migrate-storage, %s is stored in %s", key, mediaType)
		}
	}
}
