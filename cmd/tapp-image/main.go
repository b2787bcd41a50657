// Command tapp-image builds the tapp-apiserver container image without a container daemon (pkg/ociimage):
// an OCI image layout and a `docker save` tarball under --out. `make image` runs it; its last line of output
// is the reference to deploy, <repository>:<tag>@<digest>.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/ociimage"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tapp-image", flag.ContinueOnError)
	o := ociimage.Options{ModuleDir: ".", Log: os.Stderr}
	fs.StringVar(&o.OutDir, "out", "_output/image", "Directory for bin/, the OCI layout oci/ and the tarball tapp-apiserver.tar.")
	fs.StringVar(&o.Repository, "repository", "tapp-apiserver", "Image repository, e.g. registry.example.com/tapp-apiserver.")
	fs.StringVar(&o.Tag, "tag", "", "Image tag (default: --version).")
	fs.StringVar(&o.Metadata.Version, "version", "", "Version label, `git describe --tags --always --dirty`.")
	fs.StringVar(&o.Metadata.Revision, "revision", "", "Revision label, the commit.")
	fs.StringVar(&o.Metadata.Source, "source", "https://github.com/tapp-io/tapp-apiserver", "Source label, the repository's URL.")
	platforms := fs.String("platforms", "linux/amd64", "Comma-separated os/arch[/variant] list; the tarball holds the first.")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"),
		"Creation time in seconds since 1970 (default $SOURCE_DATE_EPOCH), e.g. the commit's `git log -1 --format=%ct`.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Metadata.Version == "" {
		return fmt.Errorf("--version is required")
	}
	if o.Tag == "" {
		o.Tag = o.Metadata.Version
	}
	seconds, err := strconv.ParseInt(*epoch, 10, 64)
	if err != nil {
		return fmt.Errorf("--source-date-epoch (or $SOURCE_DATE_EPOCH) must be seconds since 1970: %q", *epoch)
	}
	o.Metadata.Created = time.Unix(seconds, 0).UTC()
	for _, s := range strings.Split(*platforms, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		o.Platforms = append(o.Platforms, *p)
	}

	res, err := ociimage.Build(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote the OCI layout %s and the tarball %s (%s)\n", res.Layout, res.Tarball, o.Platforms[0])
	fmt.Println(res.Reference)
	return nil
}
