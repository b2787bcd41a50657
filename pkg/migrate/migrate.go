// Package migrate moves an installation of the CRD-based originals (tkestack/tapp's TApp, yurt-app-manager's
// YurtAppDaemon and NodePool) onto tapp-apiserver without restarting a pod: it checks that the originals are
// stopped, backs every object up to a file, deletes the objects with orphan propagation, removes the
// originals' webhooks and CRDs, registers tapp-apiserver's APIServices and creates the objects again, whose
// controllers then adopt the orphaned pods, claims and workloads. Every step first looks at what is already
// done, so a run that stopped half-way continues where it stopped when run again with the same backup file.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
)

// Options are the choices of one run.
type Options struct {
	// APIServiceFile holds the APIService manifests to register (with their caBundle).
	APIServiceFile string
	// BackupFile is where the objects are backed up, and where a re-run finds them.
	BackupFile string
	// DryRun prints the plan and changes nothing.
	DryRun bool
	// Force skips the check that the original controllers are stopped.
	Force bool
	// Timeout bounds each wait (garbage collection, APIService availability, adoption).
	Timeout time.Duration
}

// Migrator runs a migration.
type Migrator struct {
	Options
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Out receives the plan, the progress and the report, one line each.
	Out io.Writer
	// Now is the clock of the leader lock check; nil means time.Now.
	Now func() time.Time
	// Interval is how often waits poll; 0 means one second.
	Interval time.Duration
	// Serves reports whether the tapp-apiserver the objects move to serves a kind in a version; nil means
	// this binary's scheme (apiserver.Scheme), which is the server's: migrate is the server binary.
	Serves func(schema.GroupVersionKind) bool
}

const fieldManager = "tapp-apiserver-migrate"

func (m *Migrator) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Migrator) serves(gvk schema.GroupVersionKind) bool {
	if m.Serves != nil {
		return m.Serves(gvk)
	}
	return apiserver.Scheme.Recognizes(gvk)
}

func (m *Migrator) printf(format string, args ...interface{}) {
	fmt.Fprintf(m.Out, format+"\n", args...)
}

// state is what the cluster and the backup file hold when a run starts.
type state struct {
	backupPath string
	backup     *Backup
	// apiServices are the manifests of the APIService file; registered maps each group to its versions.
	apiServices []*unstructured.Unstructured
	registered  map[string][]string
	// migrating are the kinds whose group the file registers.
	migrating []kind
	// crds are the CRDs of migrating kinds that still exist, by kind; served are the objects they serve.
	crds   map[string]*unstructured.Unstructured
	served map[string][]*unstructured.Unstructured
	// hooks are removed whole; hookEdits lose only the webhooks that intercept the migrated kinds.
	hooks     []*unstructured.Unstructured
	hookEdits []webhookEdit
}

// Run migrates, or with DryRun prints what it would do.
func (m *Migrator) Run(ctx context.Context) error {
	if m.Timeout == 0 {
		m.Timeout = 5 * time.Minute
	}
	if m.Interval == 0 {
		m.Interval = time.Second
	}
	if m.BackupFile == "" {
		return errors.New("--backup-file is required: migrate writes every object there before it deletes anything")
	}
	s, err := m.observe(ctx)
	if err != nil {
		return err
	}
	if err := m.check(ctx, s); err != nil {
		return err
	}
	if m.DryRun {
		m.printPlan(s)
		return nil
	}
	steps := []func(context.Context, *state) error{
		m.writeBackup,
		m.removeWebhooks,
		m.deleteObjects,
		m.deleteCRDs,
		m.registerAPIServices,
		m.restoreObjects,
		m.awaitAdoption,
	}
	for _, step := range steps {
		if err := step(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// observe reads the APIService file, the backup file, the CRDs and the objects they serve.
func (m *Migrator) observe(ctx context.Context) (*state, error) {
	s := &state{crds: map[string]*unstructured.Unstructured{}, served: map[string][]*unstructured.Unstructured{}}
	var err error
	if s.backupPath, err = filepath.Abs(m.BackupFile); err != nil {
		return nil, err
	}
	var note string
	if s.apiServices, s.registered, note, err = readAPIServices(m.APIServiceFile); err != nil {
		return nil, err
	}
	if note != "" {
		m.printf("%s", note)
	}
	for _, k := range kinds {
		if _, ok := s.registered[k.Group]; ok {
			s.migrating = append(s.migrating, k)
		}
	}
	if s.backup, err = loadBackup(s.backupPath); err != nil {
		return nil, err
	}
	for _, k := range s.migrating {
		crd, err := m.Dynamic.Resource(crdGVR).Get(ctx, k.crdName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading CustomResourceDefinition %s: %w; check the kubeconfig (migrate needs a cluster admin) and run migrate again", k.crdName(), err)
		}
		s.crds[k.Kind] = crd
	}
	if len(s.crds) == 0 && s.backup == nil {
		var names []string
		for _, k := range s.migrating {
			names = append(names, k.crdName())
		}
		return nil, fmt.Errorf("none of the CRDs %s exists and there is no backup file %s: there is nothing to migrate; "+
			"if an earlier run already deleted the CRDs, run again with the --backup-file it wrote", strings.Join(names, ", "), s.backupPath)
	}
	for kindName, crd := range s.crds {
		if marked := crd.GetAnnotations()[backupFileAnnotation]; s.backup == nil && marked != "" && marked != s.backupPath {
			return nil, fmt.Errorf("CustomResourceDefinition %s: a migration that keeps its backup in %s has started, "+
				"and %s does not exist; run again with --backup-file=%s", crd.GetName(), marked, s.backupPath, marked)
		}
		k, _ := kindOf(groupOf(crd), kindName)
		versions := crdVersions(crd, true)
		if len(versions) != 1 {
			return nil, fmt.Errorf("CustomResourceDefinition %s has no single storage version; fix its spec.versions and run migrate again", crd.GetName())
		}
		list, err := m.Dynamic.Resource(k.gvr(versions[0])).List(ctx, metav1.ListOptions{})
		stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		if err != nil {
			// Objects written before the storage version changed (OpenYurt v1.7 stores NodePools as v1beta2,
			// earlier releases as v1beta1) are still stored in the older version: reading them in another
			// one needs the original's conversion webhook, which is down with the original. When all of
			// them are in one older version, they read in it without conversion.
			for _, v := range stored {
				if v == versions[0] {
					continue
				}
				if older, olderErr := m.Dynamic.Resource(k.gvr(v)).List(ctx, metav1.ListOptions{}); olderErr == nil {
					list, err = older, nil
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s/%s, the CRD's storage version: %w; its objects may be stored in several "+
				"versions (status.storedVersions %v), which only the original's conversion webhook converts: start the "+
				"original again, rewrite every object in %s (`kubectl get %s.%s -A -o json | kubectl replace -f -`), set "+
				"the CRD's status.storedVersions to [%s] (`kubectl patch crd %s --subresource=status --type=merge -p "+
				"'{\"status\":{\"storedVersions\":[\"%s\"]}}'`), stop the original and run migrate again",
				k.Resource, k.Group, versions[0], err, stored, versions[0], k.Resource, k.Group, versions[0], crd.GetName(), versions[0])
		}
		for i := range list.Items {
			s.served[kindName] = append(s.served[kindName], &list.Items[i])
		}
	}
	if s.backup == nil {
		s.backup = &Backup{}
	}
	return s, nil
}

func groupOf(crd *unstructured.Unstructured) string {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	return group
}

// check collects every problem that stops the migration before anything changes, and the dependents of
// the objects the CRDs still serve.
func (m *Migrator) check(ctx context.Context, s *state) error {
	var problems Problems
	if len(s.crds) > 0 {
		shared, err := m.checkSharedVersions(ctx, s.registered)
		if err != nil {
			return err
		}
		problems = append(problems, shared...)
		if !m.Force {
			var originals []string
			for kindName := range s.crds {
				k, _ := kindOf(groupOf(s.crds[kindName]), kindName)
				for _, o := range originalsOf(k.Group) {
					if !slices.Contains(originals, o) {
						originals = append(originals, o)
					}
				}
			}
			sort.Strings(originals)
			running, err := m.checkOriginalsStopped(ctx, originals)
			if err != nil {
				return err
			}
			problems = append(problems, running...)
		}
		for _, crd := range s.crds {
			for _, v := range crdVersions(crd, false) {
				if !slices.Contains(s.registered[groupOf(crd)], v) {
					m.printf("warning: CRD %s serves %s/%s, which the APIService file does not register; manifests written for it will not apply after the migration",
						crd.GetName(), groupOf(crd), v)
				}
			}
		}
	}
	hooks, edits, hookProblems, err := m.originalWebhooks(ctx, s.migrating)
	if err != nil {
		return err
	}
	s.hooks, s.hookEdits = hooks, edits
	problems = append(problems, hookProblems...)

	// The objects the CRDs serve now replace what an earlier run backed up.
	for kindName, objects := range s.served {
		k, _ := kindOf(groupOf(s.crds[kindName]), kindName)
		for _, obj := range objects {
			e := &Entry{Object: obj}
			if old := s.backup.entry(k, obj.GetNamespace(), obj.GetName()); old != nil && old.Object.GetUID() == obj.GetUID() {
				e.Dependents = old.Dependents
			}
			deps, err := m.dependents(ctx, k, obj)
			if err != nil {
				return err
			}
			if len(deps) > 0 || e.Dependents == nil {
				e.Dependents = deps
			}
			s.backup.put(e)
		}
	}
	s.backup.sortEntries()
	for _, e := range s.backup.Entries {
		if _, ok := s.registered[e.Object.GroupVersionKind().Group]; !ok {
			continue
		}
		fix := "fix it with `kubectl edit` while its CRD still serves it, then run migrate again"
		if s.crds[e.Object.GetKind()] == nil {
			fix = "fix it in the backup file " + s.backupPath + " and run migrate again"
		}
		obj, err := restoreForm(e, s.registered)
		if err != nil {
			problems = append(problems, Problem{Object: e.key(), Reason: err.Error(), Fix: "install a tapp-apiserver that serves NodePool " +
				"apps.openyurt.io/v1beta2, register v1beta2.apps.openyurt.io in the file and run migrate again; or set those fields " +
				"back to their defaults (`kubectl edit nodepool " + e.Object.GetName() + "` while its CRD serves it)"})
			continue
		}
		gvk := obj.GroupVersionKind()
		if !m.serves(gvk) {
			fix := "leave the APIServices of " + gvk.Group + " out of the file so that its CRD keeps serving it " +
				"(see Coexistence in docs/install.md)"
			if gvk.Kind == "YurtAppSet" {
				fix = "install a tapp-apiserver that serves YurtAppSets (apps.openyurt.io/v1beta1) and run migrate again, or " + fix
			}
			problems = append(problems, Problem{Object: e.key(), Reason: fmt.Sprintf("it is stored as %s, which this tapp-apiserver does not serve", obj.GetAPIVersion()),
				Fix: fix})
			continue
		}
		if !slices.Contains(s.registered[gvk.Group], gvk.Version) {
			problems = append(problems, Problem{Object: e.key(), Reason: fmt.Sprintf("it is restored as %s, which the APIService file does not register", obj.GetAPIVersion()),
				Fix: "add the APIService " + gvk.Version + "." + gvk.Group + " to the file"})
			continue
		}
		errs, err := validateForCreate(obj)
		if err != nil {
			problems = append(problems, Problem{Object: e.key(), Reason: err.Error(), Fix: fix})
			continue
		}
		if len(errs) > 0 {
			problems = append(problems, Problem{Object: e.key(), Reason: "tapp-apiserver would refuse it: " + errs.ToAggregate().Error(), Fix: fix})
		}
	}
	if len(problems) > 0 {
		return problems
	}
	return nil
}

// dependents lists the objects of the dependent kinds of k in obj's namespace that obj controls.
func (m *Migrator) dependents(ctx context.Context, k kind, obj *unstructured.Unstructured) ([]Dependent, error) {
	uid, ns := obj.GetUID(), obj.GetNamespace()
	var out []Dependent
	add := func(kindName string, meta metav1.ObjectMeta, restarts int32) {
		if ref := metav1.GetControllerOfNoCopy(&meta); ref != nil && ref.UID == uid {
			out = append(out, Dependent{Kind: kindName, Name: meta.Name, UID: meta.UID, Labels: meta.Labels, Restarts: restarts})
		}
	}
	for _, d := range k.Dependents {
		switch d {
		case "Pod":
			pods, err := m.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing the pods of %s: %w; run migrate again", objectKey(obj), err)
			}
			for i := range pods.Items {
				add(d, pods.Items[i].ObjectMeta, restarts(&pods.Items[i]))
			}
		case "PersistentVolumeClaim":
			claims, err := m.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing the claims of %s: %w; run migrate again", objectKey(obj), err)
			}
			for i := range claims.Items {
				add(d, claims.Items[i].ObjectMeta, 0)
			}
		case "Deployment":
			list, err := m.Kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing the Deployments of %s: %w; run migrate again", objectKey(obj), err)
			}
			for i := range list.Items {
				add(d, list.Items[i].ObjectMeta, 0)
			}
		case "StatefulSet":
			list, err := m.Kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing the StatefulSets of %s: %w; run migrate again", objectKey(obj), err)
			}
			for i := range list.Items {
				add(d, list.Items[i].ObjectMeta, 0)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind+"/"+out[i].Name < out[j].Kind+"/"+out[j].Name })
	return out, nil
}

func restarts(pod *corev1.Pod) int32 {
	var n int32
	for _, c := range pod.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// describeDependents summarises dependents: "3 pods, 3 claims".
func describeDependents(deps []Dependent) string {
	counts := map[string]int{}
	for _, d := range deps {
		counts[d.Kind]++
	}
	var parts []string
	for _, k := range []string{"Pod", "PersistentVolumeClaim", "Deployment", "StatefulSet"} {
		if counts[k] > 0 {
			parts = append(parts, plural(counts[k], map[string]string{"Pod": "pod", "PersistentVolumeClaim": "claim",
				"Deployment": "Deployment", "StatefulSet": "StatefulSet"}[k]))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// printPlan says what a run would do, in order.
func (m *Migrator) printPlan(s *state) {
	m.printf("dry run: nothing is changed; a run would:")
	m.printf("  write the backup file %s with %d object(s)", s.backupPath, len(s.backup.Entries))
	for _, h := range s.hooks {
		m.printf("  remove %s (an original's webhooks)", objectKey(h))
	}
	for _, edit := range s.hookEdits {
		m.printf("  remove the webhooks %s from %s (yurt-manager's; its other webhooks stay)", strings.Join(edit.Names, ", "), objectKey(edit.Object))
	}
	for _, k := range s.migrating {
		for _, obj := range s.served[k.Kind] {
			e := s.backup.entry(k, obj.GetNamespace(), obj.GetName())
			if len(e.Dependents) == 0 {
				m.printf("  delete %s (orphan propagation)", e.key())
			} else {
				m.printf("  delete %s (orphan propagation), orphaning %s", e.key(), describeDependents(e.Dependents))
			}
		}
	}
	for _, k := range s.migrating {
		if crd := s.crds[k.Kind]; crd != nil {
			m.printf("  delete CustomResourceDefinition %s", crd.GetName())
		}
	}
	for _, a := range s.apiServices {
		m.printf("  register APIService %s and wait until it is Available", a.GetName())
	}
	for _, e := range s.backup.Entries {
		if _, ok := s.registered[e.Object.GroupVersionKind().Group]; ok {
			apiVersion := e.Object.GetAPIVersion()
			if obj, err := restoreForm(e, s.registered); err == nil {
				apiVersion = obj.GetAPIVersion()
			}
			if len(e.Dependents) == 0 {
				m.printf("  create %s (%s)", e.key(), apiVersion)
			} else {
				m.printf("  create %s (%s) and wait until it has adopted %s", e.key(), apiVersion, describeDependents(e.Dependents))
			}
		}
	}
}

// writeBackup writes the backup file before anything is changed, and marks the CRDs with its path.
func (m *Migrator) writeBackup(ctx context.Context, s *state) error {
	for _, k := range s.migrating {
		crd := s.crds[k.Kind]
		if crd == nil {
			continue
		}
		c := crd.DeepCopy()
		annotations := c.GetAnnotations()
		delete(annotations, backupFileAnnotation)
		c.SetAnnotations(annotations)
		c.SetUID("")
		c.SetCreationTimestamp(metav1.Time{})
		c.SetGeneration(0)
		delete(c.Object, "status")
		s.backup.CRDs = putUnique(s.backup.CRDs, c)
	}
	hooks := append([]*unstructured.Unstructured{}, s.hooks...)
	for _, edit := range s.hookEdits {
		hooks = append(hooks, edit.Object)
	}
	for _, h := range hooks {
		c := h.DeepCopy()
		c.SetUID("")
		c.SetCreationTimestamp(metav1.Time{})
		c.SetGeneration(0)
		s.backup.WebhookConfigurations = putUnique(s.backup.WebhookConfigurations, c)
	}
	if err := saveBackup(s.backupPath, s.backup); err != nil {
		return fmt.Errorf("writing the backup file %s: %w; nothing has been changed", s.backupPath, err)
	}
	m.printf("backed up %d object(s) to %s", len(s.backup.Entries), s.backupPath)
	for _, k := range s.migrating {
		crd := s.crds[k.Kind]
		if crd == nil || crd.GetAnnotations()[backupFileAnnotation] == s.backupPath {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, backupFileAnnotation, s.backupPath)
		if _, err := m.Dynamic.Resource(crdGVR).Patch(ctx, crd.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("CustomResourceDefinition %s: marking it with the backup file: %w; run migrate again", crd.GetName(), err)
		}
	}
	return nil
}

// removeWebhooks deletes the originals' webhook configurations. It comes before the deletions: with the
// originals stopped, their webhooks (failurePolicy Fail) would refuse the garbage collector's removal of
// the orphan finalizer and, later, every write to tapp-apiserver, which calls the cluster's webhooks too.
func (m *Migrator) removeWebhooks(ctx context.Context, s *state) error {
	for _, h := range s.hooks {
		var err error
		if h.GetKind() == "ValidatingWebhookConfiguration" {
			err = m.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, h.GetName(), metav1.DeleteOptions{})
		} else {
			err = m.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, h.GetName(), metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: deleting it: %w; run migrate again", objectKey(h), err)
		}
		m.printf("removed %s", objectKey(h))
	}
	for _, edit := range s.hookEdits {
		if err := m.removeWebhooksFrom(ctx, edit); err != nil {
			return fmt.Errorf("%s: removing the webhooks %s: %w; run migrate again", objectKey(edit.Object), strings.Join(edit.Names, ", "), err)
		}
		m.printf("removed the webhooks %s from %s", strings.Join(edit.Names, ", "), objectKey(edit.Object))
	}
	return nil
}

// removeWebhooksFrom removes the webhooks edit.Names from a configuration, keeping its other webhooks.
func (m *Migrator) removeWebhooksFrom(ctx context.Context, edit webhookEdit) error {
	name := edit.Object.GetName()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if edit.Object.GetKind() == "ValidatingWebhookConfiguration" {
			client := m.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
			cur, err := client.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			kept := slices.DeleteFunc(slices.Clone(cur.Webhooks), func(w admissionregistrationv1.ValidatingWebhook) bool { return slices.Contains(edit.Names, w.Name) })
			if len(kept) == len(cur.Webhooks) {
				return nil
			}
			cur.Webhooks = kept
			_, err = client.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		}
		client := m.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
		cur, err := client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		kept := slices.DeleteFunc(slices.Clone(cur.Webhooks), func(w admissionregistrationv1.MutatingWebhook) bool { return slices.Contains(edit.Names, w.Name) })
		if len(kept) == len(cur.Webhooks) {
			return nil
		}
		cur.Webhooks = kept
		_, err = client.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
}

// pastRemovedWebhooks makes the call and repeats it, until the timeout, while it fails because an API
// server still calls a webhook migrate removed: kube-apiserver and tapp-apiserver learn of a removed
// webhook configuration through a watch, a moment after the removal.
func (m *Migrator) pastRemovedWebhooks(ctx context.Context, s *state, call func() error) error {
	var result error
	err := m.waitUntil(ctx, func(context.Context) (bool, error) {
		result = call()
		if callsRemovedWebhook(result, removedWebhookNames(s)) {
			return false, result
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return result
}

// removedWebhookNames are the names of the webhooks migrate removes: those of the removed configurations,
// and those removed from yurt-manager's.
func removedWebhookNames(s *state) []string {
	var names []string
	for _, h := range s.hooks {
		hooks, _, _ := unstructured.NestedSlice(h.Object, "webhooks")
		for _, hook := range hooks {
			fields, _ := hook.(map[string]interface{})
			if name, _, _ := unstructured.NestedString(fields, "name"); name != "" {
				names = append(names, name)
			}
		}
	}
	for _, edit := range s.hookEdits {
		names = append(names, edit.Names...)
	}
	return names
}

// callsRemovedWebhook reports whether err is a server's failure to call one of the removed webhooks.
func callsRemovedWebhook(err error, removed []string) bool {
	if err == nil || !apierrors.IsInternalError(err) {
		return false
	}
	for _, name := range removed {
		if strings.Contains(err.Error(), fmt.Sprintf("failed calling webhook %q", name)) {
			return true
		}
	}
	return false
}

// deleteObjects deletes every object the CRDs serve with orphan propagation and waits until it is gone,
// which is when the garbage collector has removed its ownerReferences from its dependents.
func (m *Migrator) deleteObjects(ctx context.Context, s *state) error {
	for _, k := range s.migrating {
		for _, obj := range s.served[k.Kind] {
			version := obj.GroupVersionKind().Version
			res := m.resource(k, version, obj.GetNamespace())
			uid := obj.GetUID()
			orphan := metav1.DeletePropagationOrphan
			err := m.pastRemovedWebhooks(ctx, s, func() error {
				return res.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &orphan, Preconditions: &metav1.Preconditions{UID: &uid}})
			})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("%s: deleting it with orphan propagation: %w; run migrate again", objectKey(obj), err)
			}
		}
	}
	for _, k := range s.migrating {
		for _, obj := range s.served[k.Kind] {
			e := s.backup.entry(k, obj.GetNamespace(), obj.GetName())
			if err := m.awaitOrphaned(ctx, k, e); err != nil {
				return err
			}
			if len(e.Dependents) == 0 {
				m.printf("deleted %s", e.key())
			} else {
				m.printf("deleted %s, orphaning %s", e.key(), describeDependents(e.Dependents))
			}
		}
	}
	return nil
}

func (m *Migrator) resource(k kind, version, namespace string) dynamic.ResourceInterface {
	if k.Namespaced {
		return m.Dynamic.Resource(k.gvr(version)).Namespace(namespace)
	}
	return m.Dynamic.Resource(k.gvr(version))
}

// awaitOrphaned waits until the object is gone and none of its dependents refers to it.
func (m *Migrator) awaitOrphaned(ctx context.Context, k kind, e *Entry) error {
	uid := e.Object.GetUID()
	res := m.resource(k, e.Object.GroupVersionKind().Version, e.Object.GetNamespace())
	err := m.waitUntil(ctx, func(ctx context.Context) (bool, error) {
		cur, err := res.Get(ctx, e.Object.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, err
		case cur.GetUID() == uid:
			return false, errors.New("it still exists (finalizers " + strings.Join(cur.GetFinalizers(), ", ") + ")")
		}
		for _, d := range e.Dependents {
			meta, err := m.dependentMeta(ctx, e.Object.GetNamespace(), d)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return false, err
			}
			for _, ref := range meta.OwnerReferences {
				if ref.UID == uid {
					return false, fmt.Errorf("%s %s still refers to it", d.Kind, d.Name)
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%s: the garbage collector has not finished orphaning it within %s (%v); check that "+
			"kube-controller-manager runs its garbage collector, then run migrate again", e.key(), m.Timeout, err)
	}
	return nil
}

func (m *Migrator) dependentMeta(ctx context.Context, ns string, d Dependent) (*metav1.ObjectMeta, error) {
	switch d.Kind {
	case "Pod":
		o, err := m.Kube.CoreV1().Pods(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return &o.ObjectMeta, nil
	case "PersistentVolumeClaim":
		o, err := m.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return &o.ObjectMeta, nil
	case "Deployment":
		o, err := m.Kube.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return &o.ObjectMeta, nil
	case "StatefulSet":
		o, err := m.Kube.AppsV1().StatefulSets(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return &o.ObjectMeta, nil
	}
	return nil, fmt.Errorf("unknown dependent kind %s", d.Kind)
}

// deleteCRDs deletes the CRDs once they serve nothing the backup lacks, and waits until they and the
// APIServices kube-apiserver made for them are gone.
func (m *Migrator) deleteCRDs(ctx context.Context, s *state) error {
	for _, k := range s.migrating {
		crd := s.crds[k.Kind]
		if crd == nil {
			continue
		}
		// Deleting a CRD deletes what it still serves, with background propagation: an object created since
		// the backup would take its pods with it.
		list, err := m.Dynamic.Resource(k.gvr(crdVersions(crd, true)[0])).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("CustomResourceDefinition %s: listing what it still serves: %w; run migrate again", crd.GetName(), err)
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("CustomResourceDefinition %s: %s was created after the backup; run migrate again to back it up",
				crd.GetName(), objectKey(&list.Items[0]))
		}
		uid := crd.GetUID()
		err = m.Dynamic.Resource(crdGVR).Delete(ctx, crd.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("CustomResourceDefinition %s: deleting it: %w; run migrate again", crd.GetName(), err)
		}
	}
	for _, k := range s.migrating {
		crd := s.crds[k.Kind]
		if crd == nil {
			continue
		}
		err := m.waitUntil(ctx, func(ctx context.Context) (bool, error) {
			_, err := m.Dynamic.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return true, nil
			case err != nil:
				return false, err
			}
			return false, errors.New("it still exists")
		})
		if err != nil {
			return fmt.Errorf("CustomResourceDefinition %s is still there after %s (%v); see `kubectl get crd %s -o yaml` (status.conditions) and run migrate again",
				crd.GetName(), m.Timeout, err, crd.GetName())
		}
		m.printf("deleted CustomResourceDefinition %s", crd.GetName())
	}
	return nil
}

// automanagedLabel marks the APIServices kube-apiserver keeps for CRDs and built-in groups.
const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// registerAPIServices creates or updates the APIServices of the file, once the ones kube-apiserver kept
// for the CRDs are gone, and waits until each is Available and its resources answer through the
// aggregator. The resources are addressed by group, version and resource, never through a cached discovery:
// between the CRD deletion and the APIService's availability the group-version is served by nobody.
func (m *Migrator) registerAPIServices(ctx context.Context, s *state) error {
	client := m.Dynamic.Resource(apiServiceGVR)
	for _, want := range s.apiServices {
		err := m.waitUntil(ctx, func(ctx context.Context) (bool, error) {
			cur, err := client.Get(ctx, want.GetName(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = client.Create(ctx, want, metav1.CreateOptions{FieldManager: fieldManager})
			case err != nil:
			case cur.GetLabels()[automanagedLabel] != "":
				return false, errors.New("kube-apiserver still serves it locally (for a CRD)")
			case apiequality.Semantic.DeepEqual(cur.Object["spec"], want.Object["spec"]):
				return true, nil
			default:
				update := want.DeepCopy()
				update.SetResourceVersion(cur.GetResourceVersion())
				update.Object["status"] = cur.Object["status"]
				_, err = client.Update(ctx, update, metav1.UpdateOptions{FieldManager: fieldManager})
			}
			if refusedForGood(err) {
				return false, stop(err)
			}
			return err == nil, err
		})
		if err != nil {
			return fmt.Errorf("APIService %s: registering it failed within %s (%v); fix what the error names (the file "+
				"%s, or the cluster) and run migrate again: nothing serves %s until it is registered",
				want.GetName(), m.Timeout, err, m.APIServiceFile, want.GetName())
		}
	}
	for _, want := range s.apiServices {
		err := m.waitUntil(ctx, func(ctx context.Context) (bool, error) {
			cur, err := client.Get(ctx, want.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conditions, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
			for _, c := range conditions {
				cond, _ := c.(map[string]interface{})
				if cond["type"] == "Available" {
					if cond["status"] == "True" {
						return true, nil
					}
					return false, fmt.Errorf("Available=%v: %v", cond["status"], cond["message"])
				}
			}
			return false, errors.New("no Available condition yet")
		})
		if err != nil {
			return fmt.Errorf("APIService %s is not Available after %s (%v); check that tapp-apiserver runs and that the "+
				"APIService's service and caBundle reach it, then run migrate again", want.GetName(), m.Timeout, err)
		}
		m.printf("registered APIService %s (Available)", want.GetName())
	}
	for _, k := range s.migrating {
		for _, version := range s.registered[k.Group] {
			if !slices.Contains(k.Versions, version) || !apiserver.Scheme.Recognizes(k.gvr(version).GroupVersion().WithKind(k.Kind)) {
				continue
			}
			err := m.waitUntil(ctx, func(ctx context.Context) (bool, error) {
				_, err := m.Dynamic.Resource(k.gvr(version)).List(ctx, metav1.ListOptions{Limit: 1})
				return err == nil, err
			})
			if err != nil {
				return fmt.Errorf("%s/%s %s do not answer through the aggregator after %s (%v); run migrate again",
					k.Group, version, k.Resource, m.Timeout, err)
			}
		}
	}
	return nil
}

// refusedForGood reports whether err is the cluster refusing a request in a way that repeating it cannot
// change: a malformed or invalid object, or missing permission.
func refusedForGood(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err) || apierrors.IsUnsupportedMediaType(err)
}

// restoreObjects creates every backed-up object on tapp-apiserver; one that exists already was created by
// an earlier run and is kept.
func (m *Migrator) restoreObjects(ctx context.Context, s *state) error {
	for _, e := range s.backup.Entries {
		k := e.kind()
		if _, ok := s.registered[k.Group]; !ok {
			continue
		}
		obj, err := restoreForm(e, s.registered)
		if err != nil {
			return fmt.Errorf("%s: %w", e.key(), err)
		}
		res := m.resource(k, obj.GroupVersionKind().Version, obj.GetNamespace())
		err = m.pastRemovedWebhooks(ctx, s, func() error {
			_, err := res.Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
			return err
		})
		switch {
		case apierrors.IsAlreadyExists(err):
			m.printf("%s exists on tapp-apiserver already (created by an earlier run)", e.key())
		case apierrors.IsNotFound(err) && k.Namespaced:
			return fmt.Errorf("%s: creating it: %w; its namespace may be gone: remove it from the backup file %s or create the namespace, then run migrate again",
				e.key(), err, s.backupPath)
		case err != nil:
			return fmt.Errorf("%s: creating it on tapp-apiserver: %w; fix the object in the backup file %s if the server refused it, then run migrate again",
				e.key(), err, s.backupPath)
		default:
			m.printf("created %s on tapp-apiserver", e.key())
		}
	}
	return nil
}
