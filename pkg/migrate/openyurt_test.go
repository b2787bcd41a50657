package migrate

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
)

// OpenYurt v1.7 as its chart installs it: NodePool stored as v1beta2 (v1alpha1 and v1beta1 served through
// yurt-manager's conversion webhook), YurtAppSet v1beta1, the YurtAppDaemon CRD the chart still ships.
func openYurtV17CRDs(t *testing.T) []runtime.Object {
	crd := func(name, kind, versions string) *unstructured.Unstructured {
		return mustUnstructured(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: `+name+`}
spec:
  group: apps.openyurt.io
  names: {kind: `+kind+`}
  versions: `+versions+`
`)
	}
	return []runtime.Object{
		crd("nodepools.apps.openyurt.io", "NodePool",
			"[{name: v1alpha1, served: true, storage: false}, {name: v1beta1, served: true, storage: false}, {name: v1beta2, served: true, storage: true}]"),
		crd("yurtappsets.apps.openyurt.io", "YurtAppSet", "[{name: v1beta1, served: true, storage: true}]"),
		crd("yurtappdaemons.apps.openyurt.io", "YurtAppDaemon", "[{name: v1alpha1, served: true, storage: true}]"),
	}
}

// openYurtAPIServices writes an APIService file registering apps.openyurt.io/v1alpha1 and v1beta1.
func openYurtAPIServices(t *testing.T, f *fixture) {
	t.Helper()
	doc := func(version string) string {
		file := strings.ReplaceAll(apiServiceFile, "v1.apps.tkestack.io", version+".apps.openyurt.io")
		return strings.ReplaceAll(strings.ReplaceAll(file, "group: apps.tkestack.io", "group: apps.openyurt.io"), "version: v1\n", "version: "+version+"\n")
	}
	if err := os.WriteFile(f.m.APIServiceFile, []byte(doc("v1alpha1")+"---\n"+doc("v1beta1")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// yurtManagerWebhooks are yurt-manager's two webhook configurations, cut to a few of their webhooks: some
// intercept the moved kinds, others Deployments, Nodes and YurtStaticSets.
func yurtManagerWebhooks() []runtime.Object {
	path := "/x"
	service := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: "kube-system", Name: yurtManagerWebhookService, Path: &path}}
	rule := func(group, version, resource string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}}}
	}
	return []runtime.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager-mutating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{
				{Name: "mutate.apps.v1.deployment", ClientConfig: service, Rules: rule("apps", "v1", "deployments")},
				{Name: "m.v1beta1.nodepool.kb.io", ClientConfig: service, Rules: rule(openyurtGroup, "v1beta1", "nodepools")},
				{Name: "myurtappset.kb.io", ClientConfig: service, Rules: rule(openyurtGroup, "v1beta1", "yurtappsets")},
				{Name: "mutate.apps.v1alpha1.yurtstaticset.openyurt.io", ClientConfig: service, Rules: rule(openyurtGroup, "v1alpha1", "yurtstaticsets")},
			}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager-validating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{
				{Name: "validate.core.v1.node.openyurt.io", ClientConfig: service, Rules: rule("", "v1", "nodes")},
				{Name: "v.v1beta1.nodepool.kb.io", ClientConfig: service, Rules: rule(openyurtGroup, "v1beta1", "nodepools")},
				{Name: "validate.apps.v1alpha1.yurtappdaemon.openyurt.io", ClientConfig: service, Rules: rule(openyurtGroup, "v1alpha1", "yurtappdaemons")},
			}},
	}
}

func TestRefusesWhileYurtManagerRuns(t *testing.T) {
	manager := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager", Namespace: "kube-system",
			Labels: map[string]string{"app.kubernetes.io/name": "yurt-manager", "app.kubernetes.io/instance": "yurt-manager"}},
		Spec:   appsv1.DeploymentSpec{Template: corev1PodTemplate("openyurt/yurt-manager:v1.7.0")},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1},
	}
	// A release-named Deployment is found by its chart label.
	renamed := manager.DeepCopy()
	renamed.Name, renamed.Spec.Template = "edge", corev1PodTemplate("registry.example.com/manager:v1")
	for _, d := range []*appsv1.Deployment{manager, renamed} {
		t.Run(d.Name, func(t *testing.T) {
			f := newFixture(t, []runtime.Object{d}, openYurtV17CRDs(t)...)
			openYurtAPIServices(t, f)
			err := f.m.Run(context.Background())
			want := "Deployment kube-system/" + d.Name + ": the original controller yurt-manager still runs (1 ready replicas); " +
				"stop it with `kubectl -n kube-system scale deployment " + d.Name + " --replicas=0`"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "docs/migrate.md") {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if m := f.mutations(); len(m) > 0 {
				t.Fatalf("changes made: %v", m)
			}
		})
	}
}

func TestRemovesOnlyYurtManagersWebhooksOfTheMovedKinds(t *testing.T) {
	f := newFixture(t, yurtManagerWebhooks(), openYurtV17CRDs(t)...)
	openYurtAPIServices(t, f)
	var moved []kind
	for _, k := range kinds {
		if k.Group == openyurtGroup {
			moved = append(moved, k)
		}
	}
	remove, edits, problems, err := f.m.originalWebhooks(context.Background(), moved)
	if err != nil {
		t.Fatal(err)
	}
	if len(remove) != 0 || len(problems) != 0 || len(edits) != 2 {
		t.Fatalf("remove %v, problems %v, edits %v; want two edits", remove, problems, edits)
	}
	wantNames := map[string]string{
		"MutatingWebhookConfiguration yurt-manager-mutating-webhook-configuration":     "m.v1beta1.nodepool.kb.io,myurtappset.kb.io",
		"ValidatingWebhookConfiguration yurt-manager-validating-webhook-configuration": "v.v1beta1.nodepool.kb.io,validate.apps.v1alpha1.yurtappdaemon.openyurt.io",
	}
	for _, e := range edits {
		if got := strings.Join(e.Names, ","); got != wantNames[objectKey(e.Object)] {
			t.Errorf("%s: removes %s, want %s", objectKey(e.Object), got, wantNames[objectKey(e.Object)])
		}
	}
	s := &state{hookEdits: edits}
	if err := f.m.removeWebhooks(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	mutating, err := f.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), "yurt-manager-mutating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, w := range mutating.Webhooks {
		kept = append(kept, w.Name)
	}
	if strings.Join(kept, ",") != "mutate.apps.v1.deployment,mutate.apps.v1alpha1.yurtstaticset.openyurt.io" {
		t.Errorf("mutating webhooks kept: %v", kept)
	}
	validating, err := f.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), "yurt-manager-validating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(validating.Webhooks) != 1 || validating.Webhooks[0].Name != "validate.core.v1.node.openyurt.io" {
		t.Errorf("validating webhooks kept: %v", validating.Webhooks)
	}
	// A second run finds nothing more to remove and changes nothing.
	before := len(f.mutations())
	if err := f.m.removeWebhooks(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if after := f.mutations(); len(after) != before {
		t.Errorf("the second removal wrote again: %v", after[before:])
	}
	if !callsRemovedWebhook(errInternal(`failed calling webhook "myurtappset.kb.io"`), removedWebhookNames(s)) ||
		callsRemovedWebhook(errInternal(`failed calling webhook "mutate.apps.v1.deployment"`), removedWebhookNames(s)) {
		t.Error("callsRemovedWebhook does not tell the removed webhooks from the kept ones")
	}
}

// TestMigratesOpenYurtV17: NodePools stored as v1beta2 with OpenYurt's defaults in the v1beta2-only
// fields are created as v1beta1 with every other field (this server not serving v1beta2 yet, or the file
// not registering it); a YurtAppSet moves, and is refused by a server that does not serve YurtAppSets.
func TestMigratesOpenYurtV17(t *testing.T) {
	pool := mustUnstructured(t, `apiVersion: apps.openyurt.io/v1beta2
kind: NodePool
metadata: {name: hangzhou, uid: pool-uid, labels: {region: hangzhou, nodepool.openyurt.io/type: edge}}
spec:
  type: Edge
  hostNetwork: false
  labels: {zone: east}
  annotations: {owner: team-a}
  taints: [{key: edge, value: "true", effect: NoSchedule}]
  interConnectivity: false
  leaderElectionStrategy: random
  leaderReplicas: 1
  poolScopeMetadata:
  - {group: discovery.k8s.io, version: v1, resource: endpointslices}
  - {group: "", version: v1, resource: services}
`)
	yas := mustUnstructured(t, `apiVersion: apps.openyurt.io/v1beta1
kind: YurtAppSet
metadata: {name: web, namespace: default, uid: yas-uid}
spec:
  pools: [hangzhou]
  workload:
    workloadTemplate:
      deploymentTemplate:
        metadata: {labels: {app: web}}
        spec:
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "nginx:1.25"}]}
`)
	refusal := "YurtAppSet default/web: it is stored as apps.openyurt.io/v1beta1, which this tapp-apiserver does not serve; " +
		"install a tapp-apiserver that serves YurtAppSets (apps.openyurt.io/v1beta1)"
	t.Run("a YurtAppSet this server serves", func(t *testing.T) {
		if !apiserver.Scheme.Recognizes(schema.GroupVersionKind{Group: openyurtGroup, Version: "v1beta1", Kind: "YurtAppSet"}) {
			t.Fatal("this build does not serve YurtAppSets")
		}
		f := newFixture(t, yurtManagerWebhooks(), append(openYurtV17CRDs(t), pool.DeepCopy(), yas.DeepCopy())...)
		openYurtAPIServices(t, f)
		f.m.DryRun = true
		if err := f.m.Run(context.Background()); err != nil {
			t.Fatalf("refused a YurtAppSet this build serves: %v", err)
		}
		if !strings.Contains(f.out.String(), "delete YurtAppSet default/web (orphan propagation)") {
			t.Fatalf("the plan does not move the YurtAppSet:\n%s", f.out.String())
		}
	})
	t.Run("a YurtAppSet a server without YurtAppSets is given", func(t *testing.T) {
		f := newFixture(t, yurtManagerWebhooks(), append(openYurtV17CRDs(t), pool.DeepCopy(), yas.DeepCopy())...)
		openYurtAPIServices(t, f)
		f.m.Serves = func(gvk schema.GroupVersionKind) bool {
			return gvk.Kind != "YurtAppSet" && apiserver.Scheme.Recognizes(gvk)
		}
		err := f.m.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), refusal) {
			t.Fatalf("err = %v, want %q", err, refusal)
		}
		if m := f.mutations(); len(m) > 0 {
			t.Fatalf("changes made: %v", m)
		}
	})

	t.Run("NodePools", func(t *testing.T) {
		f := newFixture(t, yurtManagerWebhooks(), append(openYurtV17CRDs(t), pool.DeepCopy())...)
		openYurtAPIServices(t, f)
		f.dynamic.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
			switch u.GetKind() {
			case "APIService":
				_ = unstructured.SetNestedSlice(u.Object, []interface{}{map[string]interface{}{"type": "Available", "status": "True"}}, "status", "conditions")
			case "NodePool":
				u.SetUID("new-pool-uid")
				_ = unstructured.SetNestedStringSlice(u.Object, []string{"node-0"}, "status", "nodes")
			}
			return false, nil, nil
		})
		f.m.DryRun = true
		if err := f.m.Run(context.Background()); err != nil {
			t.Fatalf("dry run: %v\noutput:\n%s", err, f.out.String())
		}
		for _, want := range []string{
			"remove the webhooks m.v1beta1.nodepool.kb.io, myurtappset.kb.io from MutatingWebhookConfiguration yurt-manager-mutating-webhook-configuration (yurt-manager's; its other webhooks stay)",
			"delete NodePool hangzhou (orphan propagation)",
			"create NodePool hangzhou (apps.openyurt.io/v1beta1)",
		} {
			if !strings.Contains(f.out.String(), want) {
				t.Errorf("dry run output lacks %q:\n%s", want, f.out.String())
			}
		}
		if m := f.mutations(); len(m) > 0 {
			t.Fatalf("the dry run changed %v", m)
		}
		f.m.DryRun = false
		f.out.Reset()
		if err := f.m.Run(context.Background()); err != nil {
			t.Fatalf("%v\noutput:\n%s", err, f.out.String())
		}
		for _, want := range []string{
			"removed the webhooks m.v1beta1.nodepool.kb.io, myurtappset.kb.io from MutatingWebhookConfiguration yurt-manager-mutating-webhook-configuration",
			"deleted CustomResourceDefinition nodepools.apps.openyurt.io",
			"deleted CustomResourceDefinition yurtappsets.apps.openyurt.io",
			"NodePool hangzhou: served by tapp-apiserver with 1 node (node-0)",
		} {
			if !strings.Contains(f.out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, f.out.String())
			}
		}
		// Read in its storage version (the conversion webhook is down with yurt-manager), deleted there too.
		var reads []string
		for _, a := range f.dynamic.Actions() {
			if a.GetResource().Resource == "nodepools" && (a.GetVerb() == "list" || a.GetVerb() == "delete") {
				reads = append(reads, a.GetVerb()+" "+a.GetResource().Version)
			}
		}
		// Until the CRD is gone (the lists after it go to tapp-apiserver), only v1beta2.
		deleted := slices.Index(reads, "delete v1beta2")
		if deleted < 1 || slices.ContainsFunc(reads[:min(deleted+2, len(reads))], func(r string) bool { return !strings.HasSuffix(r, " v1beta2") }) {
			t.Errorf("NodePools were read and deleted as %v, want in v1beta2 until the CRD is gone", reads)
		}
		created, err := f.dynamic.Resource(schema.GroupVersionResource{Group: openyurtGroup, Version: "v1beta1", Resource: "nodepools"}).
			Get(context.Background(), "hangzhou", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]interface{}{"type": "Edge", "hostNetwork": false, "labels": map[string]interface{}{"zone": "east"},
			"annotations": map[string]interface{}{"owner": "team-a"},
			"taints":      []interface{}{map[string]interface{}{"key": "edge", "value": "true", "effect": "NoSchedule"}}}
		if !equalJSON(created.Object["spec"], want) || created.GetLabels()["nodepool.openyurt.io/type"] != "edge" {
			t.Errorf("created NodePool %v, want spec %v and the pool's labels", created.Object, want)
		}
		// The backup keeps the pool as stored, v1beta2 fields included, and yurt-manager's configurations whole.
		data, err := os.ReadFile(f.m.BackupFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"apiVersion: apps.openyurt.io/v1beta2", "leaderElectionStrategy: random", "mutate.apps.v1.deployment", "myurtappset.kb.io"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("the backup lacks %q", want)
			}
		}
	})
}

func TestNodePoolV1beta2AsV1beta1(t *testing.T) {
	for _, tc := range []struct {
		name, spec, lost string
	}{
		{name: "no v1beta2 field", spec: "{type: Cloud}"},
		{name: "OpenYurt's defaults", spec: "{type: Edge, leaderReplicas: 1, leaderElectionStrategy: random, enableLeaderElection: false, " +
			"interConnectivity: false, enablePoolScopeMetadata: false, leaderNodeLabelSelector: {}, " +
			"poolScopeMetadata: [{group: '', version: v1, resource: services}, {group: discovery.k8s.io, version: v1, resource: endpointslices}]}"},
		{name: "interConnectivity", spec: "{type: Edge, interConnectivity: true}", lost: "spec.interConnectivity=true"},
		{name: "mark strategy", spec: "{leaderElectionStrategy: mark, leaderNodeLabelSelector: {leader: 'yes'}}",
			lost: `spec.leaderElectionStrategy="mark", spec.leaderNodeLabelSelector={"leader":"yes"}`},
		{name: "other pool-scope metadata", spec: "{poolScopeMetadata: [{group: '', version: v1, resource: configmaps}]}",
			lost: `spec.poolScopeMetadata=[{"group":"","resource":"configmaps","version":"v1"}]`},
		{name: "an unknown field", spec: "{type: Edge, futureField: 1}", lost: "spec.futureField=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := mustUnstructured(t, "apiVersion: apps.openyurt.io/v1beta2\nkind: NodePool\nmetadata: {name: p}\nspec: "+tc.spec+"\n")
			got, err := nodePoolV1beta2AsV1beta1(pool, "which the APIService file does not register")
			if tc.lost != "" {
				if err == nil || !strings.Contains(err.Error(), tc.lost) {
					t.Fatalf("err = %v, want it to name %s", err, tc.lost)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetAPIVersion() != "apps.openyurt.io/v1beta1" {
				t.Errorf("apiVersion %s", got.GetAPIVersion())
			}
			spec, _, _ := unstructured.NestedMap(got.Object, "spec")
			for k := range spec {
				if !strings.Contains(strings.Join(nodePoolV1beta1Fields, ","), k) {
					t.Errorf("spec.%s kept", k)
				}
			}
			if errs, err := validateForCreate(got); err != nil || len(errs) > 0 {
				t.Errorf("the server would refuse %v: %v %v", got.Object, err, errs)
			}
		})
	}
}

func corev1PodTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: image}}}}
}

func errInternal(msg string) error { return apierrors.NewInternalError(errors.New(msg)) }

// TestReadsNodePoolsStoredInAnOlderVersion: NodePools written before OpenYurt v1.7 are still stored as
// v1beta1; with yurt-manager's conversion webhook down they read only in v1beta1. When every one reads
// there, they are backed up in it; when no version reads, the refusal says how to bring them to one.
func TestReadsNodePoolsStoredInAnOlderVersion(t *testing.T) {
	crds := openYurtV17CRDs(t)
	crd := crds[0].(*unstructured.Unstructured)
	_ = unstructured.SetNestedStringSlice(crd.Object, []string{"v1beta1", "v1beta2"}, "status", "storedVersions")
	pool := mustUnstructured(t, `apiVersion: apps.openyurt.io/v1beta1
kind: NodePool
metadata: {name: hangzhou, uid: pool-uid}
spec: {type: Edge, hostNetwork: true}
`)
	conversionDown := errInternal(`conversion webhook for apps.openyurt.io/v1beta1, Kind=NodePool failed: Post "https://yurt-manager-webhook-service.kube-system.svc:443/convert": no endpoints available`)
	for _, tc := range []struct {
		name        string
		olderFails  bool
		wantRefusal string
	}{
		{name: "all in v1beta1"},
		{name: "mixed", olderFails: true, wantRefusal: "its objects may be stored in several versions (status.storedVersions [v1beta1 v1beta2])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil, append(crds[:1:1], pool.DeepCopy())...)
			openYurtAPIServices(t, f)
			f.dynamic.PrependReactor("list", "nodepools", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if v := a.GetResource().Version; v == "v1beta2" || (tc.olderFails && v == "v1beta1") {
					return true, nil, conversionDown
				}
				return false, nil, nil
			})
			f.m.DryRun = true
			err := f.m.Run(context.Background())
			if tc.wantRefusal != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantRefusal) || !strings.Contains(err.Error(), "kubectl replace") {
					t.Fatalf("err = %v, want %q", err, tc.wantRefusal)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\noutput:\n%s", err, f.out.String())
			}
			if !strings.Contains(f.out.String(), "create NodePool hangzhou (apps.openyurt.io/v1beta1)") {
				t.Errorf("output:\n%s", f.out.String())
			}
		})
	}
}

// TestRefusesWhileYurtManagersLeaseIsRenewed: yurt-manager running outside the cluster still renews its
// Lease kube-system/yurt-manager.
func TestRefusesWhileYurtManagersLeaseIsRenewed(t *testing.T) {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager", Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-a_1234"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: testNow.Add(-3 * time.Second)}},
	}
	f := newFixture(t, []runtime.Object{lease}, openYurtV17CRDs(t)...)
	openYurtAPIServices(t, f)
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `Lease kube-system/yurt-manager: the leader lock of yurt-manager is held by "node-a_1234"`) {
		t.Fatalf("err = %v", err)
	}
}
