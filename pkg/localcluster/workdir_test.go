package localcluster

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mkdirs(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindEarlierCluster(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dirs     []string
		state    string
		wantForm string // "": none found
	}{
		{name: "empty"},
		{name: "logs only", dirs: []string{"logs", "pki"}},
		{name: "single form before the state file", dirs: []string{"etcd/member", "tapp-apiserver/etcd"}, wantForm: FormSingle},
		{name: "HA form before the state file", dirs: []string{"etcd/member", "tapp-etcd/tapp-etcd-0"}, wantForm: FormHA},
		{name: "both stores, no state file", dirs: []string{"etcd/member", "tapp-etcd", "tapp-apiserver/etcd"}, wantForm: FormSingle},
		{name: "state file", dirs: []string{"etcd/member", "tapp-apiserver/etcd"}, state: `{"form":"ha"}`, wantForm: FormHA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mkdirs(t, dir, tc.dirs...)
			if tc.state != "" {
				if err := os.WriteFile(filepath.Join(dir, stateFile), []byte(tc.state), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := FindEarlierCluster(dir)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantForm == "" && got != nil:
				t.Errorf("found a %s cluster, want none", got.Form)
			case tc.wantForm != "" && (got == nil || got.Form != tc.wantForm):
				t.Errorf("found %+v, want a %s cluster", got, tc.wantForm)
			}
		})
	}
}

func TestOpenWorkStateRefusesTheOtherFormAtOnce(t *testing.T) {
	dir := t.TempDir()
	single := &Cluster{cfg: Config{WorkDir: dir, FreshCommand: "make run ARGS=--fresh", Log: t.Logf}}
	if err := single.openWorkState(); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, dir, "etcd/member", "tapp-apiserver/etcd")

	ha := &Cluster{cfg: Config{WorkDir: dir, HA: true, FreshCommand: `make run ARGS="--ha --fresh"`, Log: t.Logf}}
	err := ha.openWorkState()
	var mismatch *FormMismatchError
	if !errors.As(err, &mismatch) || mismatch.Found != FormSingle || mismatch.Asked != FormHA {
		t.Fatalf("the HA form on the single form's directory: %v, want a FormMismatchError", err)
	}
	if !strings.Contains(err.Error(), `make run ARGS="--ha --fresh"`) {
		t.Errorf("the error does not name the command that starts fresh: %v", err)
	}

	var logged []string
	again := &Cluster{cfg: Config{WorkDir: dir, FreshCommand: "make run ARGS=--fresh", Log: func(f string, a ...interface{}) {
		logged = append(logged, f)
	}}}
	if err := again.openWorkState(); err != nil {
		t.Fatalf("the single form on its own directory: %v", err)
	}
	if len(logged) != 1 || !strings.HasPrefix(logged[0], "found an earlier") {
		t.Errorf("logged %q, want the earlier cluster reported", logged)
	}

	if err := RemoveData(dir); err != nil {
		t.Fatal(err)
	}
	if err := ha.openWorkState(); err != nil {
		t.Errorf("the HA form after RemoveData: %v", err)
	}
}

func TestRemoveDataRemovesOnlyWhatClustersWrite(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, dir, workDirEntries...)
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RemoveData(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "notes.txt" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left %v, want only notes.txt", names)
	}
}

func TestPortKeepsTheRecordedPort(t *testing.T) {
	c := &Cluster{cfg: Config{WorkDir: t.TempDir()}, state: &workState{Form: FormSingle, Ports: map[string]int{}}}
	first, err := c.port("etcd-peer", true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := readWorkState(c.cfg.WorkDir)
	if err != nil || st == nil || st.Ports["etcd-peer"] != first {
		t.Fatalf("recorded %+v (%v), want etcd-peer %d", st, err, first)
	}
	if again, err := c.port("etcd-peer", true); err != nil || again != first {
		t.Errorf("the free recorded port: %d (%v), want %d", again, err, first)
	}

	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(first))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := c.port("etcd-peer", true); err == nil {
		t.Error("a taken port that must be kept: no error")
	}
	if other, err := c.port("etcd-peer", false); err != nil || other == first {
		t.Errorf("a taken port that may change: %d (%v), want another one", other, err)
	}
}

func TestWritePKIKeepsWhatIsValid(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, dir, "pki")
	c := &Cluster{cfg: Config{WorkDir: dir}}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "pki", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := c.writePKI(); err != nil {
		t.Fatal(err)
	}
	files := []string{"client-ca.crt", "client-ca.key", "front-proxy-ca.crt", "admin.crt", "admin.key",
		"kube-apiserver.crt", "front-proxy-client.crt", "sa.key", "sa.pub"}
	before := map[string][]byte{}
	for _, f := range files {
		before[f] = read(f)
	}
	if err := c.writePKI(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !bytes.Equal(before[f], read(f)) {
			t.Errorf("%s changed at the second start", f)
		}
	}

	// A missing key: only that certificate is issued again.
	if err := os.Remove(filepath.Join(dir, "pki", "admin.key")); err != nil {
		t.Fatal(err)
	}
	if err := c.writePKI(); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before["admin.crt"], read("admin.crt")) {
		t.Error("admin.crt kept without its key")
	}
	if !bytes.Equal(before["kube-apiserver.crt"], read("kube-apiserver.crt")) || !bytes.Equal(before["client-ca.crt"], read("client-ca.crt")) {
		t.Error("a missing admin key changed other certificates")
	}

	// A new client CA: everything it signed is issued again; the front proxy's CA and its client stay.
	if err := os.Remove(filepath.Join(dir, "pki", "client-ca.key")); err != nil {
		t.Fatal(err)
	}
	if err := c.writePKI(); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before["kube-apiserver.crt"], read("kube-apiserver.crt")) {
		t.Error("kube-apiserver.crt kept though its CA is new")
	}
	if !bytes.Equal(before["front-proxy-client.crt"], read("front-proxy-client.crt")) {
		t.Error("front-proxy-client.crt changed though its CA did not")
	}
}

func TestEtcdCertsKeptWhileValid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	hosts := []string{"127.0.0.1", "localhost"}
	if err := etcdCerts(dir, "local-etcd", hosts); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := etcdCerts(dir, "local-etcd", hosts); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "ca.crt")); !bytes.Equal(ca, again) {
		t.Error("the etcd certificates were issued again though valid")
	}
	if err := etcdCerts(dir, "local-etcd", append(hosts, "etcd.example")); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "ca.crt")); bytes.Equal(ca, again) {
		t.Error("the etcd certificates were kept for other hosts")
	}
}

func TestOpenWorkStateRefusesAnHAClusterWithoutRecordedPorts(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, dir, "etcd/member", "tapp-etcd/tapp-etcd-0")
	c := &Cluster{cfg: Config{WorkDir: dir, HA: true, FreshCommand: `make run ARGS="--ha --fresh"`, Log: t.Logf}}
	if err := c.openWorkState(); err == nil || !strings.Contains(err.Error(), `make run ARGS="--ha --fresh"`) {
		t.Errorf("an HA directory without %s: %v, want an error naming the command that starts fresh", stateFile, err)
	}
}

func TestWaitServerFailsAtOnceWhenTheFenceRefusesTheStore(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, dir, "logs")
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "[-]storage-fence failed", http.StatusInternalServerError)
	}))
	defer notReady.Close()
	line := `E1127 14:48:25.385281 1964 fence.go:240] "` + storeRefusal + `" reason="StoreEmpty"`
	if err := os.WriteFile(filepath.Join(dir, "logs", "tapp-apiserver.log"), []byte("I1127 starting\n"+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{cfg: Config{WorkDir: dir, FreshCommand: "make run ARGS=--fresh", Log: t.Logf}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // waitHTTP alone waits two minutes
	defer cancel()
	err := c.waitServer(ctx, "tapp-apiserver", notReady.URL+"/readyz")
	if err == nil || !strings.Contains(err.Error(), "make run ARGS=--fresh") || !strings.Contains(err.Error(), "StoreEmpty") {
		t.Errorf("waitServer: %v, want the fence's refusal and the command that starts fresh", err)
	}
}
