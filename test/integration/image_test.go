package integration

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/tapp-io/tapp-apiserver/pkg/ociimage"
)

// TestImageRunsStandalone builds the image as `make image` does (for this machine's platform) twice, to the
// same digest, reads it back
// from the OCI layout, checks that it holds exactly the two static binaries, /etc/passwd, /etc/group and /tmp,
// then runs the server binary taken out of the image with --standalone until /readyz answers 200 and /version
// reports the commit the image was built from.
func TestImageRunsStandalone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := t.TempDir()
	meta := ociimage.Metadata{
		Source:   "https://github.com/tapp-io/tapp-apiserver",
		Revision: "0123456789abcdef0123456789abcdef01234567",
		Version:  "v0.0.0-test",
		Created:  time.Unix(1700000000, 0),
	}
	build := func(out string) ociimage.Result {
		t.Helper()
		start := time.Now()
		res, err := ociimage.Build(ctx, ociimage.Options{
			ModuleDir:  filepath.Join("..", ".."),
			OutDir:     out,
			Platforms:  []v1.Platform{{OS: runtime.GOOS, Architecture: runtime.GOARCH}},
			Repository: "registry.example.com/tapp-apiserver",
			Tag:        "test",
			Metadata:   meta,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("built %s in %s", res.Reference, time.Since(start).Round(time.Second))
		return res
	}
	res := build(out)
	// Reproducible: building the same sources again, into another directory (binaries compiled and linked
	// anew there), gives the same digest and the same tarball.
	again := build(t.TempDir())
	if again.Reference != res.Reference {
		t.Errorf("building twice gave %s, then %s", res.Reference, again.Reference)
	}
	if a, b := fileDigest(t, res.Tarball), fileDigest(t, again.Tarball); a != b {
		t.Errorf("building twice gave tarballs %s, then %s", a, b)
	}

	// The image, as a pull or `crane push` would find it: the layout's single entry.
	l, err := layout.ImageIndexFromPath(res.Layout)
	if err != nil {
		t.Fatal(err)
	}
	index, err := l.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != res.Digest {
		t.Fatalf("index.json lists %+v, want only %s", index.Manifests, res.Digest)
	}
	img, err := l.Image(res.Digest)
	if err != nil {
		t.Fatal(err)
	}

	files := map[string][]byte{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s belongs to %d:%d, want root's (the server's user may not change its files)", h.Name, h.Uid, h.Gid)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			files[path.Clean("/"+h.Name)] = content
		}
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	want := []string{"/etc/group", "/etc/passwd", "/usr/local/bin/kubectl-tapp", "/usr/local/bin/tapp-apiserver"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("the image's files are %v, want %v", names, want)
	}

	dir := t.TempDir()
	for _, name := range []string{"tapp-apiserver", "kubectl-tapp"} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, files["/usr/local/bin/"+name], 0o755); err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS == "linux" {
			requireStatic(t, file)
		}
	}

	port := freeLoopbackPort(t)
	server := exec.CommandContext(ctx, filepath.Join(dir, "tapp-apiserver"), "--standalone",
		"--secure-port", strconv.Itoa(port),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--embedded-etcd-data-dir", filepath.Join(dir, "etcd"),
		"--embedded-etcd-unsafe-no-fsync")
	server.Dir = dir
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	defer func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = server.Process.Kill()
			<-exited
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Logf("server log:\n%s", log)
		}
	}()

	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	client := insecureHTTPClient()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the server from the image exited before /readyz answered 200: %v", err)
		default:
		}
		resp, err := client.Get(url + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz of the server from the image did not answer 200 within %s: %v", startTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	code, body := httpGet(t, url+"/version", "")
	var version struct{ GitCommit, GitTreeState, BuildDate string }
	if err := json.Unmarshal(body, &version); code != http.StatusOK || err != nil {
		t.Fatalf("GET /version = %d (%v): %s", code, err, body)
	}
	if version.GitCommit != meta.Revision || version.GitTreeState != "clean" || version.BuildDate != "2023-11-14T22:13:20Z" {
		t.Errorf("/version reports commit %q (%s) built %s, want %s (clean) built 2023-11-14T22:13:20Z",
			version.GitCommit, version.GitTreeState, version.BuildDate, meta.Revision)
	}
}

// requireStatic fails unless file is an ELF executable without a dynamic loader or shared libraries, so that
// it runs on the image's empty base.
func requireStatic(t *testing.T, file string) {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (program header %s)", filepath.Base(file), p.Type)
		}
	}
}

func fileDigest(t *testing.T, file string) string {
	t.Helper()
	content, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(content))
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
