package yurtconvert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

// Dry-run modes of a Converter.
const (
	DryRunNone   = ""
	DryRunClient = "client"
	DryRunServer = "server"
)

// FieldManager is the field manager of the conversion's writes.
const FieldManager = "kubectl-tapp-convert"

// Converter hands a YurtAppDaemon's workloads over to a YurtAppSet, printing each step to Out.
type Converter struct {
	Kube kubernetes.Interface
	Yurt versioned.Interface
	Out  io.Writer
	// BackupFile receives the YurtAppDaemon (YAML) before it is deleted; a re-run whose YurtAppDaemon is
	// gone reads it from there.
	BackupFile string
	// DryRun is DryRunNone, DryRunClient (nothing sent but reads) or DryRunServer (the YurtAppSet's create
	// is sent as a dry run).
	DryRun string
	// Timeout bounds each wait (the YurtAppDaemon's deletion, the adoptions); Interval is the poll period.
	Timeout, Interval time.Duration
}

func (c *Converter) printf(format string, args ...any) {
	fmt.Fprintf(c.Out, format+"\n", args...)
}

// Run converts the YurtAppDaemon namespace/name. It returns the YurtAppSet (the one created, the one a
// dry run would create, or the one an earlier run created). Steps:
//  1. read the YurtAppDaemon, or its backup file when it is gone (a resumed run); refuse when a YurtAppSet
//     of that name exists that the conversion did not make;
//  2. build the YurtAppSet and Check it against the NodePools and live workloads; a server dry run of its
//     create proves the kind is served and the object valid;
//  3. write the backup file;
//  4. label each workload apps.openyurt.io/ref-yurtappset=<name> (bound to its UID);
//  5. delete the YurtAppDaemon with propagationPolicy Orphan and its UID as precondition, and wait until
//     it is gone (its workloads and ControllerRevisions stay);
//  6. create the YurtAppSet;
//  7. wait until the YurtAppSet controls every workload, with the UID it had.
func (c *Converter) Run(ctx context.Context, namespace, name string) (*v1beta1.YurtAppSet, error) {
	yad, live, err := c.readYurtAppDaemon(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	existing, err := c.Yurt.OpenYurtAppsV1beta1().YurtAppSets(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return nil, fmt.Errorf("reading YurtAppSet %s/%s: %w", namespace, name, err)
	case existing.Annotations[ConvertedFromAnnotation] != string(yad.UID):
		return nil, fmt.Errorf("YurtAppSet %s/%s exists and was not made from this YurtAppDaemon (annotation %s=%q, want %q): nothing changed",
			namespace, name, ConvertedFromAnnotation, existing.Annotations[ConvertedFromAnnotation], yad.UID)
	default:
		c.printf("YurtAppSet %s/%s was created by an earlier run: resuming", namespace, name)
	}

	yas, err := YurtAppSet(yad)
	if err != nil {
		return nil, err
	}
	pools, workloads, err := c.snapshot(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var yasUID types.UID
	if existing != nil {
		yasUID = existing.UID
	}
	children := Children(yad, yasUID, workloads)
	if err := Check(yad, yas, pools, workloads); err != nil {
		return nil, fmt.Errorf("%w\nnothing changed", err)
	}
	c.printf("checked: the YurtAppSet renders the same workloads as the YurtAppDaemon in %d pool(s); %d workload(s) to hand over", selectedCount(yad, pools), len(children))
	if c.DryRun == DryRunClient {
		return yas, nil
	}
	if existing == nil {
		dry, err := c.Yurt.OpenYurtAppsV1beta1().YurtAppSets(namespace).Create(ctx, yas,
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: FieldManager})
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("the server does not serve YurtAppSet (apps.openyurt.io/v1beta1): %w; nothing changed", err)
			}
			return nil, fmt.Errorf("the server refuses the YurtAppSet: %w; nothing changed", err)
		}
		if c.DryRun == DryRunServer {
			return dry, nil
		}
	} else if c.DryRun == DryRunServer {
		return existing, nil
	}

	if live {
		if err := c.writeBackup(yad); err != nil {
			return nil, err
		}
		c.printf("backup: YurtAppDaemon %s/%s written to %s", namespace, name, c.BackupFile)
	}
	for _, h := range children {
		if err := c.label(ctx, namespace, name, h); err != nil {
			return nil, err
		}
		c.printf("labelled %s %s/%s %s=%s (pool %s)", h.Kind, namespace, h.Name, openyurt.YurtAppSetOwnerLabel, name, h.Pool)
	}
	if live {
		if err := c.deleteYurtAppDaemon(ctx, yad); err != nil {
			return nil, err
		}
		c.printf("deleted YurtAppDaemon %s/%s (orphan propagation: its workloads and ControllerRevisions stay)", namespace, name)
	}
	if existing == nil {
		created, err := c.Yurt.OpenYurtAppsV1beta1().YurtAppSets(namespace).Create(ctx, yas, metav1.CreateOptions{FieldManager: FieldManager})
		if err != nil {
			return nil, fmt.Errorf("creating YurtAppSet %s/%s: %w; the YurtAppDaemon is in %s: run again to resume", namespace, name, err, c.BackupFile)
		}
		existing = created
		c.printf("created YurtAppSet %s/%s", namespace, name)
	}
	if err := c.awaitAdoption(ctx, existing, children); err != nil {
		return existing, err
	}
	return existing, nil
}

// readYurtAppDaemon returns the YurtAppDaemon and true, or, when it is gone, the one in the backup file
// and false.
func (c *Converter) readYurtAppDaemon(ctx context.Context, namespace, name string) (*v1alpha1.YurtAppDaemon, bool, error) {
	yad, err := c.Yurt.OpenYurtAppsV1alpha1().YurtAppDaemons(namespace).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		if yad.DeletionTimestamp == nil {
			return yad, true, nil
		}
		c.printf("YurtAppDaemon %s/%s is being deleted: reading it from %s", namespace, name, c.BackupFile)
	} else if !apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("reading YurtAppDaemon %s/%s: %w", namespace, name, err)
	}
	data, ferr := os.ReadFile(c.BackupFile)
	if ferr != nil {
		if errors.Is(ferr, os.ErrNotExist) {
			return nil, false, fmt.Errorf("YurtAppDaemon %s/%s not found, and no backup file %s to resume from", namespace, name, c.BackupFile)
		}
		return nil, false, ferr
	}
	backup := &v1alpha1.YurtAppDaemon{}
	if err := yaml.UnmarshalStrict(data, backup); err != nil {
		return nil, false, fmt.Errorf("reading the backup file %s: %w", c.BackupFile, err)
	}
	if backup.Namespace != namespace || backup.Name != name {
		return nil, false, fmt.Errorf("the backup file %s holds YurtAppDaemon %s/%s, not %s/%s", c.BackupFile, backup.Namespace, backup.Name, namespace, name)
	}
	if err == nil {
		return backup, false, nil // being deleted: the rest of the run is resumption
	}
	c.printf("YurtAppDaemon %s/%s is gone: resuming from %s", namespace, name, c.BackupFile)
	return backup, false, nil
}

func (c *Converter) snapshot(ctx context.Context, namespace string) ([]*v1alpha1.NodePool, Workloads, error) {
	var w Workloads
	np, err := c.Yurt.OpenYurtAppsV1alpha1().NodePools().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, w, fmt.Errorf("listing NodePools: %w", err)
	}
	pools := make([]*v1alpha1.NodePool, 0, len(np.Items))
	for i := range np.Items {
		pools = append(pools, &np.Items[i])
	}
	ds, err := c.Kube.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, w, fmt.Errorf("listing Deployments: %w", err)
	}
	for i := range ds.Items {
		w.Deployments = append(w.Deployments, &ds.Items[i])
	}
	ss, err := c.Kube.AppsV1().StatefulSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, w, fmt.Errorf("listing StatefulSets: %w", err)
	}
	for i := range ss.Items {
		w.StatefulSets = append(w.StatefulSets, &ss.Items[i])
	}
	return pools, w, nil
}

func (c *Converter) writeBackup(yad *v1alpha1.YurtAppDaemon) error {
	out := yad.DeepCopy()
	out.APIVersion, out.Kind = v1alpha1.SchemeGroupVersion.String(), "YurtAppDaemon"
	out.ManagedFields = nil
	data, err := yaml.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.BackupFile, data, 0o600); err != nil {
		return fmt.Errorf("writing the backup file: %w; nothing changed", err)
	}
	return nil
}

// label sets RefYurtAppSetLabel on a workload, with its UID in the patch as a precondition.
func (c *Converter) label(ctx context.Context, namespace, name string, h Handed) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": h.UID, "labels": map[string]string{openyurt.YurtAppSetOwnerLabel: name}}})
	opts := metav1.PatchOptions{FieldManager: FieldManager}
	var err error
	if h.Kind == "Deployment" {
		_, err = c.Kube.AppsV1().Deployments(namespace).Patch(ctx, h.Name, types.MergePatchType, patch, opts)
	} else {
		_, err = c.Kube.AppsV1().StatefulSets(namespace).Patch(ctx, h.Name, types.MergePatchType, patch, opts)
	}
	if err != nil {
		return fmt.Errorf("labelling %s %s/%s: %w; run again to resume", h.Kind, namespace, h.Name, err)
	}
	return nil
}

func (c *Converter) deleteYurtAppDaemon(ctx context.Context, yad *v1alpha1.YurtAppDaemon) error {
	client := c.Yurt.OpenYurtAppsV1alpha1().YurtAppDaemons(yad.Namespace)
	err := client.Delete(ctx, yad.Name, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan),
		Preconditions:     &metav1.Preconditions{UID: &yad.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting YurtAppDaemon %s/%s: %w; run again to resume", yad.Namespace, yad.Name, err)
	}
	return c.poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := client.Get(ctx, yad.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}, fmt.Sprintf("YurtAppDaemon %s/%s to be gone (the garbage collector orphans its workloads first)", yad.Namespace, yad.Name))
}

// awaitAdoption waits until the YurtAppSet controls every handed-over workload under its UID.
func (c *Converter) awaitAdoption(ctx context.Context, yas *v1beta1.YurtAppSet, children []Handed) error {
	pending := map[string]Handed{}
	for _, h := range children {
		pending[h.Kind+"/"+h.Name] = h
	}
	err := c.poll(ctx, func(ctx context.Context) (bool, error) {
		for key, h := range pending {
			var meta metav1.Object
			var err error
			if h.Kind == "Deployment" {
				meta, err = c.Kube.AppsV1().Deployments(yas.Namespace).Get(ctx, h.Name, metav1.GetOptions{})
			} else {
				meta, err = c.Kube.AppsV1().StatefulSets(yas.Namespace).Get(ctx, h.Name, metav1.GetOptions{})
			}
			if err != nil {
				return false, fmt.Errorf("reading %s %s/%s: %w", h.Kind, yas.Namespace, h.Name, err)
			}
			if meta.GetUID() != h.UID {
				return false, fmt.Errorf("%s %s/%s was recreated (UID %s, was %s)", h.Kind, yas.Namespace, h.Name, meta.GetUID(), h.UID)
			}
			if ref := metav1.GetControllerOf(meta); ref != nil && ref.UID == yas.UID {
				c.printf("adopted %s %s/%s (pool %s, UID %s unchanged)", h.Kind, yas.Namespace, h.Name, h.Pool, h.UID)
				delete(pending, key)
			}
		}
		return len(pending) == 0, nil
	}, fmt.Sprintf("YurtAppSet %s/%s to adopt %d workload(s)", yas.Namespace, yas.Name, len(children)))
	if err != nil {
		return err
	}
	c.printf("done: YurtAppSet %s/%s controls %d workload(s); no workload was recreated", yas.Namespace, yas.Name, len(children))
	return nil
}

func (c *Converter) poll(ctx context.Context, cond wait.ConditionWithContextFunc, what string) error {
	interval, timeout := c.Interval, c.Timeout
	if interval <= 0 {
		interval = time.Second
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, cond)
	if err != nil && wait.Interrupted(err) {
		return fmt.Errorf("timed out after %s waiting for %s; run again to resume", timeout, what)
	}
	return err
}
