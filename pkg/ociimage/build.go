package ociimage

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Program is a command of this module that goes into the image.
type Program struct {
	// Name is the binary's name in the image, Package its Go package relative to the module's root.
	Name, Package string
}

// Programs are what the image carries: the server, its entrypoint, and the kubectl plugin, so that one
// reference distributes both (docs/install.md shows how to copy the plugin out).
var Programs = []Program{
	{Name: "tapp-apiserver", Package: "./cmd/tapp-apiserver"},
	{Name: "kubectl-tapp", Package: "./cmd/kubectl-tapp"},
}

// Options say what Build builds and where it writes.
type Options struct {
	// ModuleDir is the module's root, where `go build` runs.
	ModuleDir string
	// OutDir receives bin/<os>_<arch>/ (the binaries), oci/ (the OCI image layout) and tapp-apiserver.tar
	// (the `docker save` tarball). oci/ and the tarball are replaced.
	OutDir string
	// Platforms to build; with more than one the layout holds an image index. The tarball holds the first.
	Platforms []v1.Platform
	// Programs default to Programs; the first is the entrypoint.
	Programs []Program
	// Repository and Tag name the image, e.g. registry.example.com/tapp-apiserver and v0.1.0.
	Repository, Tag string
	Metadata        Metadata
	// Log receives the commands run; nil discards them.
	Log io.Writer
}

// Result is what Build wrote.
type Result struct {
	// Reference is Repository:Tag@Digest, the value to deploy.
	Reference string
	// Digest is the digest of the layout's single entry: the image index with several platforms, the image
	// manifest with one. `crane push <Layout> <repository>:<tag>` keeps it.
	Digest v1.Hash
	// Layout is the OCI image layout directory, Tarball the `docker save` tarball of Platforms[0].
	Layout, Tarball string
}

// Build compiles the programs for every platform (static, reproducible: CGO_ENABLED=0, -trimpath, no build
// ID or VCS stamp), assembles the images and writes the layout and the tarball.
func Build(ctx context.Context, o Options) (Result, error) {
	if len(o.Platforms) == 0 {
		return Result{}, fmt.Errorf("no platform to build for")
	}
	programs := o.Programs
	if len(programs) == 0 {
		programs = Programs
	}
	tag, err := name.NewTag(o.Repository + ":" + o.Tag)
	if err != nil {
		return Result{}, fmt.Errorf("image name: %w", err)
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}

	var images []v1.Image
	for _, platform := range o.Platforms {
		binDir := filepath.Join(o.OutDir, "bin", platform.OS+"_"+platform.Architecture+platform.Variant)
		binaries, err := BuildBinaries(ctx, o.ModuleDir, binDir, platform, programs, o.Metadata, log)
		if err != nil {
			return Result{}, err
		}
		img, err := Image(platform, binaries, o.Metadata)
		if err != nil {
			return Result{}, err
		}
		images = append(images, img)
	}

	res := Result{Layout: filepath.Join(o.OutDir, "oci"), Tarball: filepath.Join(o.OutDir, "tapp-apiserver.tar")}
	if res.Digest, err = WriteLayout(res.Layout, tag, images, o.Metadata); err != nil {
		return Result{}, err
	}
	if err := WriteTarball(res.Tarball, tag, images[0]); err != nil {
		return Result{}, err
	}
	res.Reference = tag.String() + "@" + res.Digest.String()
	return res, nil
}

// BuildBinaries compiles programs for platform into dir.
func BuildBinaries(ctx context.Context, moduleDir, dir string, platform v1.Platform, programs []Program, meta Metadata, log io.Writer) ([]Binary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	outDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS="+platform.OS, "GOARCH="+platform.Architecture)
	if platform.Architecture == "arm" && strings.HasPrefix(platform.Variant, "v") {
		env = append(env, "GOARM="+strings.TrimPrefix(platform.Variant, "v"))
	}
	var binaries []Binary
	for _, p := range programs {
		out := filepath.Join(outDir, p.Name)
		args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags(meta), "-o", out, p.Package}
		fmt.Fprintf(log, "GOOS=%s GOARCH=%s CGO_ENABLED=0 go %s\n", platform.OS, platform.Architecture, strings.Join(quoted(args), " "))
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Env = moduleDir, env
		if output, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s for %s/%s: %w\n%s", p.Package, platform.OS, platform.Architecture, err, output)
		}
		binaries = append(binaries, Binary{Name: p.Name, Path: out})
	}
	return binaries, nil
}

// ldflags strip the symbol table and the build ID and put the commit into k8s.io/component-base/version,
// which /version reports. The version itself is not stamped there: the server derives its Kubernetes
// compatibility version from component-base's version, which must stay the library's.
func ldflags(meta Metadata) string {
	flags := []string{"-s", "-w", "-buildid="}
	const pkg = "k8s.io/component-base/version"
	if meta.Revision != "" {
		treeState := "clean"
		if strings.HasSuffix(meta.Version, "-dirty") {
			treeState = "dirty"
		}
		flags = append(flags, "-X", pkg+".gitCommit="+meta.Revision, "-X", pkg+".gitTreeState="+treeState)
	}
	if !meta.Created.IsZero() {
		flags = append(flags, "-X", pkg+".buildDate="+meta.Created.UTC().Format(time.RFC3339))
	}
	return strings.Join(flags, " ")
}

func quoted(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

// WriteLayout replaces dir with an OCI image layout whose index.json has one entry, named by tag
// (org.opencontainers.image.ref.name): the image, or an index of the images when there are several. It
// returns that entry's digest.
func WriteLayout(dir string, tag name.Tag, images []v1.Image, meta Metadata) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	refName := layout.WithAnnotations(map[string]string{LabelRefName: tag.TagStr()})
	if len(images) == 1 {
		cfg, err := images[0].ConfigFile()
		if err != nil {
			return v1.Hash{}, err
		}
		if err := p.AppendImage(images[0], refName, layout.WithPlatform(*cfg.Platform())); err != nil {
			return v1.Hash{}, err
		}
		return images[0].Digest()
	}
	idx, err := Index(images, meta)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendIndex(idx, refName); err != nil {
		return v1.Hash{}, err
	}
	return idx.Digest()
}

// WriteTarball writes img, tagged tag, in the format of `docker save`, which `docker load`, `podman load`
// and `ctr image import` read.
func WriteTarball(file string, tag name.Tag, img v1.Image) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return tarball.WriteToFile(file, tag, img)
}
