// Package ociimage assembles the tapp-apiserver container image without a container daemon: the static
// binaries of the server and the kubectl plugin on an empty base, run as an unprivileged user, written as an
// OCI image layout and as a `docker save` tarball. The same binaries and Metadata give the same digest: every
// file has fixed owners, modes and modification times, and the creation time comes from Metadata.
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// BinDir holds the binaries in the image; it is the image's PATH.
	BinDir = "/usr/local/bin"
	// WorkDir is the working directory and the only directory the server's user may write to. With the flags
	// of artifacts/deploy (certificates from Secrets, etcd over the network) the server writes no file;
	// relative defaults such as --cert-dir land here. artifacts/deploy mounts an emptyDir on it, as the root
	// filesystem is read-only there.
	WorkDir = "/tmp"
	// UID and GID of the user the image runs as (the "nonroot" user of distroless images).
	UID = 65532
	GID = 65532
	// ServerPort is the port tapp-apiserver serves on in artifacts/deploy (--secure-port=8443).
	ServerPort = "8443/tcp"
)

// The OCI labels and annotations the image carries (github.com/opencontainers/image-spec annotations.md).
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
	LabelLicenses = "org.opencontainers.image.licenses"
	// LabelRefName names an image in an OCI layout's index.json (`oci:<dir>:<tag>` for skopeo, ctr import).
	LabelRefName = "org.opencontainers.image.ref.name"
)

// Metadata describes what an image is built from.
type Metadata struct {
	// Source is the repository's URL, Revision its commit, Version `git describe` of it.
	Source, Revision, Version string
	// Created is the image's creation time and every file's modification time: the commit's time
	// (SOURCE_DATE_EPOCH), so that rebuilding the same commit gives the same digest.
	Created time.Time
}

// Binary is one executable of the image.
type Binary struct {
	// Name is the file name under BinDir.
	Name string
	// Path is the built binary on this machine.
	Path string
}

// Image assembles the image of one platform: a base layer with /etc/passwd, /etc/group and WorkDir, then one
// layer per binary. binaries[0] is the entrypoint.
func Image(platform v1.Platform, binaries []Binary, meta Metadata) (v1.Image, error) {
	if len(binaries) == 0 {
		return nil, fmt.Errorf("an image needs at least one binary")
	}
	if meta.Created.IsZero() {
		return nil, fmt.Errorf("the creation time is not set")
	}
	created := meta.Created.UTC().Truncate(time.Second)

	base, err := layer(created, baseFiles())
	if err != nil {
		return nil, err
	}
	adds := []mutate.Addendum{{
		Layer:   base,
		History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "tapp-image: /etc/passwd, /etc/group, " + WorkDir},
	}}
	for _, b := range binaries {
		content, err := os.ReadFile(b.Path)
		if err != nil {
			return nil, err
		}
		l, err := layer(created, binaryFiles(b.Name, content))
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.Addendum{
			Layer:   l,
			History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "tapp-image: " + path.Join(BinDir, b.Name)},
		})
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: created}
	cfg.OS, cfg.Architecture, cfg.Variant, cfg.OSVersion = platform.OS, platform.Architecture, platform.Variant, platform.OSVersion
	labels := meta.labels()
	cfg.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint:   []string{path.Join(BinDir, binaries[0].Name)},
		WorkingDir:   WorkDir,
		Env:          []string{"PATH=" + BinDir, "HOME=" + WorkDir},
		ExposedPorts: map[string]struct{}{ServerPort: {}},
		Labels:       labels,
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// Index puts the images of several platforms into one image index, carrying the same annotations.
func Index(images []v1.Image, meta Metadata) (v1.ImageIndex, error) {
	adds := make([]mutate.IndexAddendum, 0, len(images))
	for _, img := range images {
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		platform := cfg.Platform()
		if platform == nil {
			return nil, fmt.Errorf("an image of the index has no platform")
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: platform}})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, adds...)
	return mutate.Annotations(idx, meta.labels()).(v1.ImageIndex), nil
}

func (m Metadata) labels() map[string]string {
	labels := map[string]string{
		LabelTitle:    "tapp-apiserver",
		LabelLicenses: "Apache-2.0",
		LabelCreated:  m.Created.UTC().Truncate(time.Second).Format(time.RFC3339),
	}
	for key, value := range map[string]string{LabelSource: m.Source, LabelRevision: m.Revision, LabelVersion: m.Version} {
		if value != "" {
			labels[key] = value
		}
	}
	return labels
}

// file is one entry of a layer.
type file struct {
	name    string // relative to /, no leading slash
	mode    int64  // permission bits, with c_ISVTX for the sticky bit
	dir     bool
	content []byte
}

const stickyBit = 0o1000

func baseFiles() []file {
	return []file{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, content: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, GID, WorkDir))},
		{name: "etc/group", mode: 0o644, content: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", GID))},
		// Like /tmp anywhere: everyone may write, only owners may delete.
		{name: WorkDir[1:], mode: 0o777 | stickyBit, dir: true},
	}
}

func binaryFiles(name string, content []byte) []file {
	var files []file
	for dir := BinDir[1:]; dir != "."; dir = path.Dir(dir) {
		files = append(files, file{name: dir, mode: 0o755, dir: true})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return append(files, file{name: path.Join(BinDir[1:], name), mode: 0o755, content: content})
}

// layer writes files into a gzip-compressed tar owned by root with modification time mtime. The compressed
// bytes are made once here, deterministically (no name or time in the gzip header), and reused by every
// writer.
func layer(mtime time.Time, files []file) (v1.Layer, error) {
	var tarBytes bytes.Buffer
	tw := tar.NewWriter(&tarBytes)
	for _, f := range files {
		h := &tar.Header{
			Name:    f.name,
			Mode:    f.mode,
			ModTime: mtime,
		}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.content))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	var compressed bytes.Buffer
	zw, err := gzip.NewWriterLevel(&compressed, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(zw, &tarBytes); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	data := compressed.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
