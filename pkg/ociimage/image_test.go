package ociimage

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
	meta  = Metadata{
		Source:   "https://github.com/tapp-io/tapp-apiserver",
		Revision: "0123456789abcdef0123456789abcdef01234567",
		Version:  "v0.1.0",
		Created:  time.Unix(1700000000, 0),
	}
)

// fakeBinaries writes stand-ins for the server and the plugin; their contents are all the image depends on.
func fakeBinaries(t *testing.T, server string) []Binary {
	t.Helper()
	dir := t.TempDir()
	var binaries []Binary
	for name, content := range map[string]string{"tapp-apiserver": server, "kubectl-tapp": "plugin"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
		binaries = append(binaries, Binary{Name: name, Path: path})
	}
	sort.Slice(binaries, func(i, j int) bool { return binaries[i].Name > binaries[j].Name }) // server first
	return binaries
}

func digest(t *testing.T, img interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustImage(t *testing.T, platform v1.Platform, binaries []Binary, m Metadata) v1.Image {
	t.Helper()
	img, err := Image(platform, binaries, m)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestImageReproducible: the same binaries and metadata give the same digest, and so does the layout written
// from them, byte for byte; a different binary, creation time, revision or platform gives another.
func TestImageReproducible(t *testing.T) {
	binaries := fakeBinaries(t, "server")
	first := digest(t, mustImage(t, amd64, binaries, meta))
	// Files touched in between (mtime, mode) must not matter either.
	for _, b := range binaries {
		if err := os.Chtimes(b.Path, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(b.Path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if second := digest(t, mustImage(t, amd64, binaries, meta)); second != first {
		t.Fatalf("rebuilding the same image: digest %s, then %s", first, second)
	}

	tag, err := name.NewTag("registry.example.com/tapp-apiserver:v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	var indexes []v1.Hash
	var indexJSON [][]byte
	for i := 0; i < 2; i++ {
		dir := filepath.Join(t.TempDir(), "oci")
		h, err := WriteLayout(dir, tag, []v1.Image{mustImage(t, amd64, binaries, meta), mustImage(t, arm64, binaries, meta)}, meta)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		indexes, indexJSON = append(indexes, h), append(indexJSON, raw)
	}
	if indexes[0] != indexes[1] || string(indexJSON[0]) != string(indexJSON[1]) {
		t.Fatalf("writing the same two-platform layout twice: %s then %s\n%s\n%s", indexes[0], indexes[1], indexJSON[0], indexJSON[1])
	}

	later := meta
	later.Created = meta.Created.Add(time.Second)
	otherCommit := meta
	otherCommit.Revision = "fedcba9876543210fedcba9876543210fedcba98"
	for what, img := range map[string]v1.Image{
		"another server binary": mustImage(t, amd64, fakeBinaries(t, "server2"), meta),
		"a later commit time":   mustImage(t, amd64, binaries, later),
		"another revision":      mustImage(t, amd64, binaries, otherCommit),
		"another platform":      mustImage(t, arm64, binaries, meta),
	} {
		if digest(t, img) == first {
			t.Errorf("%s gives the same digest %s", what, first)
		}
	}
}

// layerFile is what the flattened image holds at a path.
type layerFile struct {
	Type     byte
	Mode     int64
	UID, GID int
	ModTime  time.Time
	Content  string
}

func flatten(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]layerFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Clean("/"+h.Name)] = layerFile{Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid,
			ModTime: h.ModTime.UTC(), Content: string(content)}
	}
}

// TestImageContents: the configuration runs the server as 65532:65532 from /usr/local/bin with the OCI
// labels, and the filesystem holds the binaries, /etc/passwd, /etc/group and a sticky /tmp, all root's, and
// nothing else: no shell, no package manager.
func TestImageContents(t *testing.T) {
	img := mustImage(t, amd64, fakeBinaries(t, "server"), meta)
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		LabelSource:   meta.Source,
		LabelRevision: meta.Revision,
		LabelVersion:  meta.Version,
		LabelCreated:  "2023-11-14T22:13:20Z",
		LabelTitle:    "tapp-apiserver",
		LabelLicenses: "Apache-2.0",
	}
	want := v1.Config{
		User:         "65532:65532",
		Entrypoint:   []string{"/usr/local/bin/tapp-apiserver"},
		WorkingDir:   "/tmp",
		Env:          []string{"PATH=/usr/local/bin", "HOME=/tmp"},
		ExposedPorts: map[string]struct{}{"8443/tcp": {}},
		Labels:       wantLabels,
	}
	if !reflect.DeepEqual(cfg.Config, want) {
		t.Errorf("config:\n got %+v\nwant %+v", cfg.Config, want)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || !cfg.Created.Time.Equal(meta.Created) {
		t.Errorf("platform %s/%s created %s, want linux/amd64 created %s", cfg.OS, cfg.Architecture, cfg.Created, meta.Created)
	}
	manifest, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(manifest.Annotations, wantLabels) {
		t.Errorf("manifest annotations %v, want %v", manifest.Annotations, wantLabels)
	}
	if manifest.MediaType != "application/vnd.oci.image.manifest.v1+json" || manifest.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
		t.Errorf("media types %s (config %s), want OCI's", manifest.MediaType, manifest.Config.MediaType)
	}

	dir := func(mode int64) layerFile {
		return layerFile{Type: tar.TypeDir, Mode: mode, ModTime: meta.Created.UTC()}
	}
	reg := func(mode int64, content string) layerFile {
		return layerFile{Type: tar.TypeReg, Mode: mode, ModTime: meta.Created.UTC(), Content: content}
	}
	wantFiles := map[string]layerFile{
		"/etc":                          dir(0o755),
		"/etc/passwd":                   reg(0o644, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n"),
		"/etc/group":                    reg(0o644, "root:x:0:\nnonroot:x:65532:\n"),
		"/tmp":                          dir(0o1777),
		"/usr":                          dir(0o755),
		"/usr/local":                    dir(0o755),
		"/usr/local/bin":                dir(0o755),
		"/usr/local/bin/tapp-apiserver": reg(0o755, "server"),
		"/usr/local/bin/kubectl-tapp":   reg(0o755, "plugin"),
	}
	if got := flatten(t, img); !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("files:\n got %+v\nwant %+v", got, wantFiles)
	}
}

// TestIndex: several platforms make an OCI image index naming each image's platform, with the labels as
// annotations; the layout's single entry is that index, named by the tag.
func TestIndex(t *testing.T) {
	binaries := fakeBinaries(t, "server")
	images := []v1.Image{mustImage(t, amd64, binaries, meta), mustImage(t, arm64, binaries, meta)}
	tag, err := name.NewTag("registry.example.com/tapp-apiserver:v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	h, err := WriteLayout(dir, tag, images, meta)
	if err != nil {
		t.Fatal(err)
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries.Manifests) != 1 || entries.Manifests[0].Digest != h ||
		entries.Manifests[0].Annotations[LabelRefName] != "v0.1.0" || !entries.Manifests[0].MediaType.IsIndex() {
		t.Fatalf("index.json %+v, want one image index %s named v0.1.0", entries.Manifests, h)
	}
	idx, err := top.ImageIndex(h)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for i, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		if d.Digest != digest(t, images[i]) {
			t.Errorf("entry %d is %s, want %s", i, d.Digest, digest(t, images[i]))
		}
	}
	if !reflect.DeepEqual(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
	if m.Annotations[LabelRevision] != meta.Revision || m.Annotations[LabelVersion] != meta.Version {
		t.Errorf("index annotations %v, want the revision and version", m.Annotations)
	}
}

// TestWriteTarball: the tarball is in `docker save` form (manifest.json naming the tag, the config and the
// layers) with the same configuration and layers as the layout's image.
func TestWriteTarball(t *testing.T) {
	img := mustImage(t, amd64, fakeBinaries(t, "server"), meta)
	tag, err := name.NewTag("registry.example.com/tapp-apiserver:v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "image.tar")
	if err := WriteTarball(file, tag, img); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if entries[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(manifest) != 1 || !reflect.DeepEqual(manifest[0].RepoTags, []string{"registry.example.com/tapp-apiserver:v0.1.0"}) {
		t.Fatalf("manifest.json %+v, want one image tagged registry.example.com/tapp-apiserver:v0.1.0", manifest)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest[0].Layers) != len(layers) {
		t.Errorf("%d layers in the tarball, want %d", len(manifest[0].Layers), len(layers))
	}
	for _, name := range append([]string{manifest[0].Config}, manifest[0].Layers...) {
		if _, ok := entries[name]; !ok {
			t.Errorf("manifest.json names %s, which the tarball lacks", name)
		}
	}

	loaded, err := tarball.ImageFromPath(file, &tag)
	if err != nil {
		t.Fatal(err)
	}
	gotConfig, err := loaded.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	wantConfig, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if gotConfig != wantConfig {
		t.Errorf("the tarball's image has config %s, want %s", gotConfig, wantConfig)
	}
}
