package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Problem is a reason not to go on: the object it is about, what is wrong and what to do.
type Problem struct {
	Object string
	Reason string
	Fix    string
}

func (p Problem) String() string { return p.Object + ": " + p.Reason + "; " + p.Fix }

// Problems is the error of a run that stopped before changing anything (or before the next change).
type Problems []Problem

func (p Problems) Error() string {
	lines := make([]string, 0, len(p)+1)
	lines = append(lines, fmt.Sprintf("migrate cannot go on (%d problem(s)):", len(p)))
	for _, problem := range p {
		lines = append(lines, "  - "+problem.String())
	}
	return strings.Join(lines, "\n")
}

// leaseGrace is added to a leader lock's lease duration before it counts as no longer renewed.
const leaseGrace = 5 * time.Second

// checkOriginalsStopped reports every sign that an original controller still runs: a Deployment of it with
// ready replicas, or a leader lock of it renewed within its lease duration.
func (m *Migrator) checkOriginalsStopped(ctx context.Context, originals []string) (Problems, error) {
	var problems Problems
	deployments, err := m.Kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Deployments to find the original controllers: %w; migrate needs a cluster admin kubeconfig", err)
	}
	for _, original := range originals {
		for i := range deployments.Items {
			d := &deployments.Items[i]
			if !isOriginalDeployment(d, original) || d.Status.ReadyReplicas == 0 {
				continue
			}
			fix := fmt.Sprintf("stop it with `kubectl -n %s scale deployment %s --replicas=0`, wait until its pods are gone, "+
				"and run migrate again (--force skips this check)", d.Namespace, d.Name)
			if original == yurtManagerName {
				fix += "; it also runs OpenYurt's other controllers: docs/migrate.md says how to run it again afterwards " +
					"without its NodePool, YurtAppSet and YurtAppDaemon controllers"
			}
			problems = append(problems, Problem{
				Object: fmt.Sprintf("Deployment %s/%s", d.Namespace, d.Name),
				Reason: fmt.Sprintf("the original controller %s still runs (%d ready replicas)", original, d.Status.ReadyReplicas),
				Fix:    fix,
			})
		}
		locks, err := m.leaderLocks(ctx, original)
		if err != nil {
			return nil, err
		}
		now := m.now()
		for _, lock := range locks {
			if lock.record.HolderIdentity == "" {
				continue
			}
			duration := time.Duration(lock.record.LeaseDurationSeconds) * time.Second
			age := now.Sub(lock.record.RenewTime.Time)
			if age >= duration+leaseGrace {
				continue
			}
			problems = append(problems, Problem{
				Object: lock.object,
				Reason: fmt.Sprintf("the leader lock of %s is held by %q and was renewed %s ago (lease %s)",
					original, lock.record.HolderIdentity, age.Round(time.Second), duration),
				Fix: fmt.Sprintf("stop every %s process (wherever it runs), wait %s, and run migrate again (--force skips this check)",
					original, (duration + leaseGrace - age).Round(time.Second)),
			})
		}
	}
	return problems, nil
}

// isOriginalDeployment recognises the Deployment of an original by its name (tapp-controller; the Helm
// charts' yurt-app-manager and yurt-manager, possibly prefixed by the release name), by the Helm chart's
// label app.kubernetes.io/name, or by its image.
func isOriginalDeployment(d *appsv1.Deployment, original string) bool {
	if d.Name == original || strings.HasSuffix(d.Name, "-"+original) || d.Labels["app.kubernetes.io/name"] == original {
		return true
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		image := path.Base(c.Image)
		if i := strings.IndexAny(image, ":@"); i >= 0 {
			image = image[:i]
		}
		if image == original {
			return true
		}
	}
	return false
}

type leaderLock struct {
	object string
	record resourcelock.LeaderElectionRecord
}

// leaderLocks finds the leader locks named name in any namespace: Leases, and ConfigMaps and Endpoints
// carrying the leader annotation (tkestack/tapp used an Endpoints lock by default).
func (m *Migrator) leaderLocks(ctx context.Context, name string) ([]leaderLock, error) {
	byName := metav1.ListOptions{FieldSelector: "metadata.name=" + name}
	var locks []leaderLock
	leases, err := m.Kube.CoordinationV1().Leases(metav1.NamespaceAll).List(ctx, byName)
	if err != nil {
		return nil, fmt.Errorf("listing Leases named %s: %w; migrate needs a cluster admin kubeconfig", name, err)
	}
	for _, l := range leases.Items {
		if l.Name != name {
			continue
		}
		lock := leaderLock{object: fmt.Sprintf("Lease %s/%s", l.Namespace, l.Name)}
		if l.Spec.HolderIdentity != nil {
			lock.record.HolderIdentity = *l.Spec.HolderIdentity
		}
		if l.Spec.LeaseDurationSeconds != nil {
			lock.record.LeaseDurationSeconds = int(*l.Spec.LeaseDurationSeconds)
		}
		if l.Spec.RenewTime != nil {
			lock.record.RenewTime = metav1.Time{Time: l.Spec.RenewTime.Time}
		}
		locks = append(locks, lock)
	}
	configMaps, err := m.Kube.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, byName)
	if err != nil {
		return nil, fmt.Errorf("listing ConfigMaps named %s: %w; migrate needs a cluster admin kubeconfig", name, err)
	}
	for _, c := range configMaps.Items {
		if lock, ok := annotatedLock("ConfigMap", c.ObjectMeta, name); ok {
			locks = append(locks, lock)
		}
	}
	endpoints, err := m.Kube.CoreV1().Endpoints(metav1.NamespaceAll).List(ctx, byName) //nolint:staticcheck // the original's lock type
	if err != nil {
		return nil, fmt.Errorf("listing Endpoints named %s: %w; migrate needs a cluster admin kubeconfig", name, err)
	}
	for _, e := range endpoints.Items {
		if lock, ok := annotatedLock("Endpoints", e.ObjectMeta, name); ok {
			locks = append(locks, lock)
		}
	}
	return locks, nil
}

func annotatedLock(kind string, meta metav1.ObjectMeta, name string) (leaderLock, bool) {
	raw, ok := meta.Annotations[leaderAnnotation]
	if meta.Name != name || !ok {
		return leaderLock{}, false
	}
	lock := leaderLock{object: fmt.Sprintf("%s %s/%s", kind, meta.Namespace, meta.Name)}
	if err := json.Unmarshal([]byte(raw), &lock.record); err != nil {
		return leaderLock{}, false
	}
	return lock, true
}

// webhookEdit is a webhook configuration of an original that also serves other API groups (yurt-manager's):
// only the webhooks Names, which intercept the migrated kinds and target only the originals' groups, are
// removed from it. Object is the configuration as it was, for the backup.
type webhookEdit struct {
	Object *unstructured.Unstructured
	Names  []string
}

// originalWebhooks finds the webhook configurations that intercept the migrated kinds. A configuration
// whose webhooks all target only the originals' groups belongs to an original and is removed; in one of
// yurt-manager's (its webhooks call yurt-manager-webhook-service), which also serves Deployments, Nodes,
// Pods and other OpenYurt groups, only the webhooks that intercept the migrated kinds are removed. Any other
// one is a problem the user has to solve, since its webhook would keep intercepting (and, with the
// original gone, failing) the requests this server then serves.
func (m *Migrator) originalWebhooks(ctx context.Context, migrating []kind) ([]*unstructured.Unstructured, []webhookEdit, Problems, error) {
	type config struct {
		kind     string
		meta     metav1.ObjectMeta
		webhooks map[string][]admissionregistrationv1.RuleWithOperations
		services map[string]string
		object   runtime.Object
	}
	serviceName := func(c admissionregistrationv1.WebhookClientConfig) string {
		if c.Service == nil {
			return ""
		}
		return c.Service.Name
	}
	var configs []config
	validating, err := m.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing ValidatingWebhookConfigurations: %w; migrate needs a cluster admin kubeconfig", err)
	}
	for i := range validating.Items {
		c := &validating.Items[i]
		hooks := map[string][]admissionregistrationv1.RuleWithOperations{}
		services := map[string]string{}
		for _, w := range c.Webhooks {
			hooks[w.Name] = w.Rules
			services[w.Name] = serviceName(w.ClientConfig)
		}
		configs = append(configs, config{"ValidatingWebhookConfiguration", c.ObjectMeta, hooks, services, c})
	}
	mutating, err := m.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing MutatingWebhookConfigurations: %w; migrate needs a cluster admin kubeconfig", err)
	}
	for i := range mutating.Items {
		c := &mutating.Items[i]
		hooks := map[string][]admissionregistrationv1.RuleWithOperations{}
		services := map[string]string{}
		for _, w := range c.Webhooks {
			hooks[w.Name] = w.Rules
			services[w.Name] = serviceName(w.ClientConfig)
		}
		configs = append(configs, config{"MutatingWebhookConfiguration", c.ObjectMeta, hooks, services, c})
	}

	toUnstructured := func(c config) (*unstructured.Unstructured, error) {
		data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.object)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: data}
		u.SetAPIVersion("admissionregistration.k8s.io/v1")
		u.SetKind(c.kind)
		return u, nil
	}
	var remove []*unstructured.Unstructured
	var edits []webhookEdit
	var problems Problems
	for _, c := range configs {
		matching := sets.New[string]()
		matchingHooks := sets.New[string]()
		own, ownMatching, yurtManager := true, true, false
		for name, rules := range c.webhooks {
			for _, rule := range rules {
				for _, k := range migrating {
					if ruleMatches(rule, k.Group, k.Resource) {
						matching.Insert(name + " (" + k.Resource + "." + k.Group + ")")
						matchingHooks.Insert(name)
					}
				}
			}
			own = own && ownGroups(rules)
			yurtManager = yurtManager || c.services[name] == yurtManagerWebhookService
		}
		for name := range matchingHooks {
			ownMatching = ownMatching && ownGroups(c.webhooks[name])
		}
		if matching.Len() == 0 {
			continue
		}
		if !own && yurtManager && ownMatching {
			u, err := toUnstructured(c)
			if err != nil {
				return nil, nil, nil, err
			}
			edits = append(edits, webhookEdit{Object: u, Names: sets.List(matchingHooks)})
			continue
		}
		if !own {
			problems = append(problems, Problem{
				Object: c.kind + " " + c.meta.Name,
				Reason: "its webhooks " + strings.Join(sets.List(matching), ", ") + " intercept the migrated resources, " +
					"and it also serves other API groups, so it is not only an original's",
				Fix: fmt.Sprintf("remove those webhooks (`kubectl edit %s %s`) and run migrate again",
					strings.ToLower(c.kind), c.meta.Name),
			})
			continue
		}
		u, err := toUnstructured(c)
		if err != nil {
			return nil, nil, nil, err
		}
		remove = append(remove, u)
	}
	sort.Slice(remove, func(i, j int) bool { return objectKey(remove[i]) < objectKey(remove[j]) })
	sort.Slice(edits, func(i, j int) bool { return objectKey(edits[i].Object) < objectKey(edits[j].Object) })
	return remove, edits, problems, nil
}

// checkSharedVersions reports CRDs of other kinds in a group-version that the APIService file registers:
// the aggregator routes a whole group-version to one server, so they would become unreachable.
func (m *Migrator) checkSharedVersions(ctx context.Context, registered map[string][]string) (Problems, error) {
	crds, err := m.Dynamic.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing CustomResourceDefinitions: %w; migrate needs a cluster admin kubeconfig", err)
	}
	var problems Problems
	for i := range crds.Items {
		crd := &crds.Items[i]
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		versions, ok := registered[group]
		if !ok {
			continue
		}
		if slices.ContainsFunc(kinds, func(k kind) bool { return k.crdName() == crd.GetName() }) {
			continue
		}
		for _, v := range crdVersions(crd, false) {
			if slices.Contains(versions, v) {
				problems = append(problems, Problem{
					Object: "CustomResourceDefinition " + crd.GetName(),
					Reason: fmt.Sprintf("it also serves %s/%s, which the APIService file gives to tapp-apiserver; "+
						"the aggregator would send all of %s/%s there and its objects would become unreachable", group, v, group, v),
					Fix: fmt.Sprintf("move or remove that CRD first, or leave the APIService of %s/%s out of the file "+
						"(then the kinds of %s stay with their CRDs)", group, v, group),
				})
			}
		}
	}
	return problems, nil
}

// crdVersions lists the served versions of a CRD, or only the storage version.
func crdVersions(crd *unstructured.Unstructured, storageOnly bool) []string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []string
	for _, v := range versions {
		version, ok := v.(map[string]interface{})
		if !ok {
			continue
		}
		name, _, _ := unstructured.NestedString(version, "name")
		served, _, _ := unstructured.NestedBool(version, "served")
		storage, _, _ := unstructured.NestedBool(version, "storage")
		if (storageOnly && storage) || (!storageOnly && served) {
			out = append(out, name)
		}
	}
	return out
}
