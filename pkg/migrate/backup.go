package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// The backup file is a kubectl-readable v1 List: the CustomResourceDefinitions and webhook configurations
// that migrate removes, then every object the CRDs served, as read before the migration deleted them
// (without resourceVersion and managedFields). Each object also carries, in the annotation
// dependentsAnnotation, the pods, claims and workloads its controller owned at that moment, so that a later
// run can report which of them were adopted unchanged. The file is the migration's memory: once the CRDs
// are gone, a re-run restores the objects from it.
const (
	// dependentsAnnotation is set on the objects in the backup file only, never in the cluster.
	dependentsAnnotation = "migrate.tapp.io/dependents"
	// backupFileAnnotation marks the CRDs of a migration in progress with the backup file's absolute path.
	backupFileAnnotation = "migrate.tapp.io/backup-file"
	// lastApplied is kubectl's client-side apply annotation, not carried over.
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// Dependent is an object that the original controller owned, as it was when the backup was taken.
type Dependent struct {
	Kind   string            `json:"kind"`
	Name   string            `json:"name"`
	UID    types.UID         `json:"uid"`
	Labels map[string]string `json:"labels,omitempty"`
	// Restarts is the sum of the container restart counts of a pod.
	Restarts int32 `json:"restarts,omitempty"`
}

// Entry is one object of the backup.
type Entry struct {
	Object     *unstructured.Unstructured
	Dependents []Dependent
}

func (e *Entry) kind() kind {
	k, _ := kindOf(e.Object.GroupVersionKind().Group, e.Object.GetKind())
	return k
}

// key names the object for messages: "TApp default/web", "NodePool hangzhou".
func (e *Entry) key() string { return objectKey(e.Object) }

func objectKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// Backup is the content of the backup file.
type Backup struct {
	CRDs                  []*unstructured.Unstructured
	WebhookConfigurations []*unstructured.Unstructured
	Entries               []*Entry
}

// entry returns the entry of the object of kind k with namespace and name.
func (b *Backup) entry(k kind, namespace, name string) *Entry {
	for _, e := range b.Entries {
		if e.Object.GetKind() == k.Kind && e.Object.GroupVersionKind().Group == k.Group &&
			e.Object.GetNamespace() == namespace && e.Object.GetName() == name {
			return e
		}
	}
	return nil
}

// put adds or replaces (same kind, namespace and name) an entry.
func (b *Backup) put(e *Entry) {
	for i, old := range b.Entries {
		if objectKey(old.Object) == objectKey(e.Object) && old.Object.GroupVersionKind().Group == e.Object.GroupVersionKind().Group {
			b.Entries[i] = e
			return
		}
	}
	b.Entries = append(b.Entries, e)
}

// putUnique adds u to list unless an object of the same kind and name is there already.
func putUnique(list []*unstructured.Unstructured, u *unstructured.Unstructured) []*unstructured.Unstructured {
	for i, old := range list {
		if old.GetKind() == u.GetKind() && old.GetName() == u.GetName() {
			list[i] = u
			return list
		}
	}
	return append(list, u)
}

// sortEntries orders entries by restore order (kinds), then namespace and name.
func (b *Backup) sortEntries() {
	order := func(e *Entry) int {
		for i, k := range kinds {
			if k.Kind == e.Object.GetKind() {
				return i
			}
		}
		return len(kinds)
	}
	sort.SliceStable(b.Entries, func(i, j int) bool {
		a, c := b.Entries[i], b.Entries[j]
		if order(a) != order(c) {
			return order(a) < order(c)
		}
		return objectKey(a.Object) < objectKey(c.Object)
	})
}

// cleaned is a copy of u without the fields the server sets (resourceVersion, managedFields), so that the
// file can be read by kubectl create.
func cleaned(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	return c
}

// Marshal renders the backup as a YAML v1 List.
func (b *Backup) Marshal() ([]byte, error) {
	var items []interface{}
	for _, u := range b.CRDs {
		items = append(items, cleaned(u).Object)
	}
	for _, u := range b.WebhookConfigurations {
		items = append(items, cleaned(u).Object)
	}
	for _, e := range b.Entries {
		u := cleaned(e.Object)
		if len(e.Dependents) > 0 {
			data, err := json.Marshal(e.Dependents)
			if err != nil {
				return nil, err
			}
			annotations := u.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[dependentsAnnotation] = string(data)
			u.SetAnnotations(annotations)
		}
		items = append(items, u.Object)
	}
	if items == nil {
		items = []interface{}{}
	}
	return yaml.Marshal(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items})
}

// UnmarshalBackup reads a backup written by Marshal.
func UnmarshalBackup(data []byte) (*Backup, error) {
	var list struct {
		APIVersion string                   `json:"apiVersion"`
		Kind       string                   `json:"kind"`
		Items      []map[string]interface{} `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	if list.Kind != "List" {
		return nil, fmt.Errorf("not a backup written by migrate (kind %q, want List)", list.Kind)
	}
	b := &Backup{}
	for i, item := range list.Items {
		u := &unstructured.Unstructured{Object: item}
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Kind == "CustomResourceDefinition":
			b.CRDs = append(b.CRDs, u)
		case gvk.Kind == "ValidatingWebhookConfiguration" || gvk.Kind == "MutatingWebhookConfiguration":
			b.WebhookConfigurations = append(b.WebhookConfigurations, u)
		default:
			if _, ok := kindOf(gvk.Group, gvk.Kind); !ok {
				return nil, fmt.Errorf("item %d: %s is not a kind migrate moves", i, gvk)
			}
			e := &Entry{Object: u}
			annotations := u.GetAnnotations()
			if raw, ok := annotations[dependentsAnnotation]; ok {
				if err := json.Unmarshal([]byte(raw), &e.Dependents); err != nil {
					return nil, fmt.Errorf("%s: annotation %s: %w", objectKey(u), dependentsAnnotation, err)
				}
				delete(annotations, dependentsAnnotation)
				if len(annotations) == 0 {
					annotations = nil
				}
				u.SetAnnotations(annotations)
			}
			b.Entries = append(b.Entries, e)
		}
	}
	return b, nil
}

// loadBackup reads the backup file; it returns nil, nil when there is none.
func loadBackup(path string) (*Backup, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := UnmarshalBackup(data)
	if err != nil {
		return nil, fmt.Errorf("backup file %s: %w", path, err)
	}
	return b, nil
}

// saveBackup writes the backup file atomically (a temporary file in the same directory, synced, then
// renamed), so that an interrupted write never leaves half a backup behind.
func saveBackup(path string, b *Backup) error {
	b.sortEntries()
	data, err := b.Marshal()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
