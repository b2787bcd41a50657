// Package storageversion rewrites every object tapp-apiserver stores once, through its API, so that each is
// stored again in the server's current storage media type (--storage-media-type) and storage version: the
// storage-version migration of `tapp-apiserver migrate-storage`. An update that leaves an object unchanged
// is written by the server only when the stored bytes differ from what it would store now, so a second run
// changes nothing; progress is recorded in a file after every page, so an interrupted run continues where it
// stopped.
package storageversion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// Groups are the API groups whose resources are rewritten.
var Groups = []string{"apps.tkestack.io", "apps.openyurt.io"}

// maxConflicts bounds how often one object's update is retried after a conflict with another writer.
const maxConflicts = 5

// Migrator rewrites every object of Groups' resources.
type Migrator struct {
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// ProgressFile records, after every page, which resources are done and where the others stopped. Empty:
	// no record, a run starts from the beginning.
	ProgressFile string
	// PageSize is the number of objects listed at a time (default 100).
	PageSize int64
	Out      io.Writer
}

// Progress is the content of the progress file.
type Progress struct {
	// Resources, by group/resource.
	Resources map[string]*ResourceProgress `json:"resources"`
}

// ResourceProgress is where the rewrite of one resource stands.
type ResourceProgress struct {
	Done bool `json:"done,omitempty"`
	// Continue is the list continuation of the next page to rewrite.
	Continue string `json:"continue,omitempty"`
	// Rewritten counts the objects the server wrote again; Current those it already stored as it would now.
	Rewritten int `json:"rewritten"`
	Current   int `json:"current"`
}

// Run rewrites every object of every resource, resource after resource, and reports the objects it could
// not rewrite (an update the server refuses, e.g. a 422 of a rule added since the object was stored) after
// going through all of them.
func (m *Migrator) Run(ctx context.Context) error {
	resources, err := m.resources()
	if err != nil {
		return err
	}
	progress, err := m.loadProgress()
	if err != nil {
		return err
	}
	var failures []error
	for _, gvr := range resources {
		key := gvr.GroupResource().String()
		p := progress.Resources[key]
		if p == nil {
			p = &ResourceProgress{}
			progress.Resources[key] = p
		}
		if p.Done {
			fmt.Fprintf(m.Out, "%s: done in an earlier run (%d rewritten, %d already current)\n", key, p.Rewritten, p.Current)
			continue
		}
		failed, err := m.rewriteResource(ctx, gvr, p, progress)
		failures = append(failures, failed...)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		fmt.Fprintf(m.Out, "%s: %d rewritten, %d already current, %d failed\n", key, p.Rewritten, p.Current, len(failed))
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d objects were not rewritten (run again once they are fixed): %w", len(failures), errors.Join(failures...))
	}
	return nil
}

// resources lists one served version of every resource of Groups that can be listed and updated (a
// resource served in several versions has one store: it is rewritten once, through its preferred version).
func (m *Migrator) resources() ([]schema.GroupVersionResource, error) {
	lists, err := discovery.ServerPreferredResources(m.Discovery)
	if err != nil {
		return nil, fmt.Errorf("discovering the served resources: %w", err)
	}
	wanted := map[string]bool{}
	for _, g := range Groups {
		wanted[g] = true
	}
	var out []schema.GroupVersionResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || !wanted[gv.Group] {
			continue
		}
		for _, r := range list.APIResources {
			verbs := map[string]bool{}
			for _, v := range r.Verbs {
				verbs[v] = true
			}
			if verbs["list"] && verbs["update"] && !strings.Contains(r.Name, "/") {
				out = append(out, gv.WithResource(r.Name))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the server serves no resource of %v", Groups)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// rewriteResource rewrites the pages of one resource from p.Continue on, recording progress after each page.
// A continuation that expired (410) starts the resource over: rewriting an object twice writes nothing.
func (m *Migrator) rewriteResource(ctx context.Context, gvr schema.GroupVersionResource, p *ResourceProgress, progress *Progress) ([]error, error) {
	client := m.Dynamic.Resource(gvr)
	pageSize := m.PageSize
	if pageSize <= 0 {
		pageSize = 100
	}
	var failures []error
	for {
		list, err := client.List(ctx, metav1.ListOptions{Limit: pageSize, Continue: p.Continue})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			fmt.Fprintf(m.Out, "%s: the recorded continuation expired; starting the resource over\n", gvr.GroupResource())
			p.Continue = ""
			continue
		}
		if err != nil {
			return failures, fmt.Errorf("listing: %w", err)
		}
		for i := range list.Items {
			written, err := m.rewrite(ctx, client, &list.Items[i])
			switch {
			case err != nil:
				failures = append(failures, fmt.Errorf("%s %s: %w", gvr.GroupResource(), objectName(&list.Items[i]), err))
			case written:
				p.Rewritten++
			default:
				p.Current++
			}
		}
		p.Continue = list.GetContinue()
		p.Done = p.Continue == "" && len(failures) == 0
		if err := m.saveProgress(progress); err != nil {
			return failures, err
		}
		if p.Continue == "" {
			return failures, nil
		}
	}
}

// rewrite updates obj unchanged and says whether the server wrote it (its resourceVersion moved). On a
// conflict with another writer it reads the object again; one deleted meanwhile needs nothing.
func (m *Migrator) rewrite(ctx context.Context, client dynamic.NamespaceableResourceInterface, obj *unstructured.Unstructured) (bool, error) {
	for attempt := 1; ; attempt++ {
		before := obj.GetResourceVersion()
		updated, err := client.Namespace(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{})
		switch {
		case err == nil:
			return updated.GetResourceVersion() != before, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case apierrors.IsConflict(err) && attempt < maxConflicts:
			fresh, err := client.Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			obj = fresh
		default:
			return false, err
		}
	}
}

func objectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func (m *Migrator) loadProgress() (*Progress, error) {
	progress := &Progress{Resources: map[string]*ResourceProgress{}}
	if m.ProgressFile == "" {
		return progress, nil
	}
	data, err := os.ReadFile(m.ProgressFile)
	if errors.Is(err, os.ErrNotExist) {
		return progress, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, progress); err != nil {
		return nil, fmt.Errorf("reading the progress file %s: %w", m.ProgressFile, err)
	}
	if progress.Resources == nil {
		progress.Resources = map[string]*ResourceProgress{}
	}
	return progress, nil
}

// saveProgress replaces the progress file atomically (a new file renamed over the old one).
func (m *Migrator) saveProgress(progress *Progress) error {
	if m.ProgressFile == "" {
		return nil
	}
	data, err := json.MarshalIndent(progress, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.ProgressFile), filepath.Base(m.ProgressFile)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), m.ProgressFile)
}
