//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

var (
	poolsV1b2 = schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1beta2", Resource: "nodepools"}
	yasV1b1   = schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1beta1", Resource: "yurtappsets"}
)

// openYurtV17Pool is a NodePool as OpenYurt v1.7 stores it (v1beta2, with what its defaulting writes), its
// attributes already on its node (yurt-manager's NodePool controller synced them).
func openYurtV17Pool(name string, taint bool) string {
	taints := "[]"
	if taint {
		taints = "[{key: edge.example.com/isolated, value: \"true\", effect: NoSchedule}]"
	}
	return fmt.Sprintf(`apiVersion: apps.openyurt.io/v1beta2
kind: NodePool
metadata:
  name: %[1]s
  labels: {region: %[1]s, nodepool.openyurt.io/type: edge}
spec:
  type: Edge
  hostNetwork: false
  interConnectivity: false
  labels: {topology.example.com/zone: %[1]s}
  taints: %[2]s
  leaderElectionStrategy: random
  leaderReplicas: 1
  poolScopeMetadata:
  - {group: "", version: v1, resource: services}
  - {group: discovery.k8s.io, version: v1, resource: endpointslices}
`, name, taints)
}

// openYurtV17YAD is a YurtAppDaemon as yurt-manager (v1.6, whose webhook defaulted it) stored it: the pod
// template carries the core defaults and imagePullPolicy Always (the original's defaulting quirk).
const openYurtV17YAD = `apiVersion: apps.openyurt.io/v1alpha1
kind: YurtAppDaemon
metadata:
  name: edge
spec:
  revisionHistoryLimit: 10
  selector: {matchLabels: {app: edge}}
  nodepoolSelector: {matchLabels: {nodepool.openyurt.io/type: edge}}
  workloadTemplate:
    deploymentTemplate:
      metadata: {labels: {app: edge}}
      spec:
        replicas: 1
        selector: {matchLabels: {app: edge}}
        template:
          metadata: {labels: {app: edge}}
          spec:
            restartPolicy: Always
            dnsPolicy: ClusterFirst
            schedulerName: default-scheduler
            terminationGracePeriodSeconds: 30
            securityContext: {}
            containers:
            - name: edge
              image: "busybox:1.36"
              imagePullPolicy: Always
              terminationMessagePath: /dev/termination-log
              terminationMessagePolicy: File
`

// installOpenYurtV17 creates what a cluster running OpenYurt v1.7 holds for the kinds tapp-apiserver takes
// over, and returns the namespace of the workloads and the names of the pools' nodes.
func (c *migrationCluster) installOpenYurtV17(t *testing.T, ctx context.Context) (string, map[string]string) {
	t.Helper()
	crds, err := os.ReadFile(repoPath("test", "e2e", "testdata", "migrate", "openyurt-v1.7-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c.mustKubectl(t, string(crds), "apply", "-f", "-")
	c.mustKubectl(t, "", "wait", "--for=condition=Established", "--timeout=60s",
		"crd/nodepools.apps.openyurt.io", "crd/yurtappsets.apps.openyurt.io", "crd/yurtappdaemons.apps.openyurt.io")
	pollUntil(t, time.Minute, "the CRDs are served", func() error {
		_, err := c.dyn.Resource(poolsV1b2).List(ctx, metav1.ListOptions{})
		return err
	})

	// yurt-manager as its chart deploys it, and the Service of its webhooks. The Service selects no pod
	// here: the stand-in does not answer webhook calls, and an endpoint that does not answer would hold
	// every Node and Deployment write (failurePolicy Ignore) for the webhook timeout.
	chartLabels := map[string]string{"app.kubernetes.io/name": "yurt-manager", "app.kubernetes.io/instance": "yurt-manager"}
	manager := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager", Namespace: "kube-system", Labels: map[string]string{
			"helm.sh/chart": "yurt-manager-1.7.0", "app.kubernetes.io/name": "yurt-manager", "app.kubernetes.io/instance": "yurt-manager",
			"app.kubernetes.io/version": "v1.7.0", "app.kubernetes.io/managed-by": "Helm"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: chartLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: chartLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "yurt-manager", Image: "openyurt/yurt-manager:v1.7.0",
					Command: []string{"/usr/local/bin/yurt-manager"}, Args: []string{"--enable-leader-election=true", "--working-namespace=kube-system"}}}},
			},
		},
	}
	if _, err := c.kube.AppsV1().Deployments("kube-system").Create(ctx, manager, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.CoreV1().Services("kube-system").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager-webhook-service", Namespace: "kube-system"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Two pools, each with one node that carries the pool's label, labels and taint as yurt-manager left them.
	nodes := map[string]string{}
	for i, pool := range []string{"hangzhou", "shanghai"} {
		taint := pool == "hangzhou"
		c.mustKubectl(t, openYurtV17Pool(pool, taint), "create", "-f", "-")
		node := c.labelPoolNode(t, ctx, i, pool)
		nodes[pool] = node
		c.mustKubectl(t, "", "label", "node", node, "topology.example.com/zone="+pool, "--overwrite")
		if taint {
			c.mustKubectl(t, "", "taint", "node", node, "edge.example.com/isolated=true:NoSchedule", "--overwrite")
		}
	}

	ns := "edge-apps"
	c.mustKubectl(t, "", "create", "namespace", ns)
	pollUntil(t, time.Minute, "the default ServiceAccount of "+ns, func() error {
		_, err := c.kubectl(t, "", "get", "serviceaccount", "default", "-n", ns)
		return err
	})
	c.mustKubectl(t, openYurtV17YAD, "create", "-n", ns, "-f", "-")
	yad, err := c.dyn.Resource(yadsV1a1).Namespace(ns).Get(ctx, "edge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The Deployments yurt-manager rendered for the pools: generated names, the template's and the
	// selector's labels plus pool-name and its revision, the ref-nodepool annotation, the pool pinning as
	// the whole nodeSelector, an Exists toleration for each pool taint.
	revision := "edge-" + decimalHash(yad.Object["spec"])[:9]
	for pool := range nodes {
		labels := map[string]string{"app": "edge", "apps.openyurt.io/pool-name": pool, "apps.openyurt.io/controller-revision-hash": revision}
		var tolerations []corev1.Toleration
		if pool == "hangzhou" {
			tolerations = []corev1.Toleration{{Key: "edge.example.com/isolated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "edge-" + pool + "-", Namespace: ns, Labels: labels,
				Annotations: map[string]string{"apps.openyurt.io/ref-nodepool": pool},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.openyurt.io/v1alpha1", Kind: "YurtAppDaemon", Name: "edge",
					UID: yad.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "edge", "apps.openyurt.io/pool-name": pool}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						NodeSelector: map[string]string{"apps.openyurt.io/nodepool": pool},
						Tolerations:  tolerations,
						Containers:   []corev1.Container{{Name: "edge", Image: "busybox:1.36", ImagePullPolicy: corev1.PullAlways}},
					},
				},
			},
		}
		if _, err := c.kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.waitAppPodsReady(t, ctx, ns, "app=edge", 2)

	c.installOpenYurtV17YurtAppSet(t, ctx, ns)

	// yurt-manager's webhook configurations, as its chart registers them (the webhooks that concern the
	// moved kinds, and some of those that stay).
	fail, ignore := admissionregistrationv1.Fail, admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	client := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "kube-system", Name: "yurt-manager-webhook-service", Path: &path}}
	}
	rules := func(group, version, resource string, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}}}
	}
	create, update, del := admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager-mutating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: "mutate.apps.v1.deployment", ClientConfig: client("/mutate-apps-v1-deployment"), FailurePolicy: &ignore, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1"}, Rules: rules("apps", "v1", "deployments", create, update)},
			{Name: "m.v1beta1.nodepool.kb.io", ClientConfig: client("/mutate-apps-openyurt-io-v1beta1-nodepool"), FailurePolicy: &fail, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1", "v1beta1"}, Rules: rules("apps.openyurt.io", "v1beta1", "nodepools", create)},
			{Name: "mutate.apps.v1alpha1.yurtappdaemon.openyurt.io", ClientConfig: client("/mutate-apps-openyurt-io-v1alpha1-yurtappdaemon"), FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1", "v1beta1"}, Rules: rules("apps.openyurt.io", "v1alpha1", "yurtappdaemons", create, update)},
			{Name: "myurtappset.kb.io", ClientConfig: client("/mutate-apps-openyurt-io-v1beta1-yurtappset"), FailurePolicy: &fail, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1", "v1beta1"}, Rules: rules("apps.openyurt.io", "v1beta1", "yurtappsets", create, update)},
		},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "yurt-manager-validating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "validate.core.v1.node.openyurt.io", ClientConfig: client("/validate-core-openyurt-io-v1-node"), FailurePolicy: &ignore, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1"}, Rules: rules("", "v1", "nodes", update)},
			{Name: "v.v1beta1.nodepool.kb.io", ClientConfig: client("/validate-apps-openyurt-io-v1beta1-nodepool"), FailurePolicy: &fail, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1", "v1beta1"}, Rules: rules("apps.openyurt.io", "v1beta1", "nodepools", create, update, del)},
			{Name: "validate.apps.v1alpha1.yurtappdaemon.openyurt.io", ClientConfig: client("/validate-apps-openyurt-io-v1alpha1-yurtappdaemon"), FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1", "v1beta1"}, Rules: rules("apps.openyurt.io", "v1alpha1", "yurtappdaemons", create, update)},
			{Name: "vyurtappset.kb.io", ClientConfig: client("/validate-apps-openyurt-io-v1beta1-yurtappset"), FailurePolicy: &fail, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1", "v1beta1"}, Rules: rules("apps.openyurt.io", "v1beta1", "yurtappsets", create, update)},
		},
	}
	if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns, nodes
}

// nodeState is what a node carries that a pool sets: its labels and taints.
func (c *migrationCluster) nodeState(t *testing.T, ctx context.Context, names map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range names {
		node, err := c.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var taints []string
		for _, taint := range node.Spec.Taints {
			taints = append(taints, taint.ToString())
		}
		slices.Sort(taints)
		out[name] = fmt.Sprintf("labels %v taints %v", node.Labels, taints)
	}
	return out
}

// TestMigrateOpenYurtV17 moves an OpenYurt v1.7 installation (NodePools stored as v1beta2 behind
// yurt-manager's conversion webhook, the YurtAppSet and YurtAppDaemon CRDs, yurt-manager's webhooks, the
// per-pool Deployments yurt-manager rendered for a YurtAppDaemon and for a YurtAppSet with a pool tweak, and
// its revision of the YurtAppSet) onto tapp-apiserver: refused while yurt-manager runs, then done once it is
// scaled to 0, with every Deployment and pod keeping its UID and restart count, and the nodes' labels and
// taints unchanged; the YurtAppSet then reports its workload and rolls it when its template changes.
func TestMigrateOpenYurtV17(t *testing.T) {
	t.Parallel()
	c := startMigrationCluster(t)
	ctx := testContext(t, 10*time.Minute)
	ns, nodes := c.installOpenYurtV17(t, ctx)
	before := c.snapshot(t, ctx, ns)
	if len(before.uids) != 7 {
		t.Fatalf("the installation is incomplete: %v", before.uids)
	}
	nodesBefore := c.nodeState(t, ctx, nodes)

	manifest, err := c.APIServiceManifest()
	if err != nil {
		t.Fatal(err)
	}
	apiServices := filepath.Join(c.dir, "apiservices.yaml")
	if err := os.WriteFile(apiServices, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--apiservice-file=" + apiServices, "--backup-file=" + filepath.Join(c.dir, "backup.yaml"), "--timeout=2m"}

	// yurt-manager runs: refused, with how to stop it; nothing changed.
	c.waitAppPodsReady(t, ctx, "kube-system", "app.kubernetes.io/name=yurt-manager", 1)
	out, err := c.migrate(t, args...)
	if err == nil {
		t.Fatal("migrate went on while yurt-manager runs")
	}
	requireContains(t, "migrate's refusal", out, "Deployment kube-system/yurt-manager: the original controller yurt-manager still runs",
		"kubectl -n kube-system scale deployment yurt-manager --replicas=0")
	if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "yurt-manager-mutating-webhook-configuration", metav1.GetOptions{}); err != nil {
		t.Fatalf("the refused run changed yurt-manager's webhooks: %v", err)
	}

	c.mustKubectl(t, "", "-n", "kube-system", "scale", "deployment", "yurt-manager", "--replicas=0")
	c.waitAppPodsReady(t, ctx, "kube-system", "app.kubernetes.io/name=yurt-manager", 0)
	out, err = c.migrate(t, args...)
	if err != nil {
		c.dumpState(t, ns)
		t.Fatalf("migrate failed: %v", err)
	}
	requireContains(t, "migrate", out,
		"removed the webhooks m.v1beta1.nodepool.kb.io, mutate.apps.v1alpha1.yurtappdaemon.openyurt.io, myurtappset.kb.io from MutatingWebhookConfiguration yurt-manager-mutating-webhook-configuration",
		"deleted CustomResourceDefinition nodepools.apps.openyurt.io", "deleted CustomResourceDefinition yurtappsets.apps.openyurt.io",
		"created NodePool hangzhou on tapp-apiserver", "created YurtAppDaemon "+ns+"/edge on tapp-apiserver",
		"created YurtAppSet "+ns+"/web on tapp-apiserver",
		"YurtAppDaemon "+ns+"/edge: 2/2 workloads adopted with their UIDs, 0 replaced, 0 gone, 0 conflicts",
		"YurtAppSet "+ns+"/web: 1/1 workloads adopted with their UIDs, 0 replaced, 0 gone, 0 conflicts")

	// yurt-manager's other webhooks stay.
	mutating, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "yurt-manager-mutating-webhook-configuration", metav1.GetOptions{})
	if err != nil || len(mutating.Webhooks) != 1 || mutating.Webhooks[0].Name != "mutate.apps.v1.deployment" {
		t.Errorf("yurt-manager's mutating webhooks after the migration: %v (%v)", mutating, err)
	}

	// The YurtAppDaemon keeps the pod templates yurt-manager rendered: no pod replaced or restarted.
	c.waitAdoptedTemplateRecorded(t, ctx, ns, 2)
	after := c.snapshot(t, ctx, ns)
	for key, uid := range before.uids {
		if after.uids[key] != uid {
			t.Errorf("%s: uid %s, was %s", key, after.uids[key], uid)
		}
	}
	for key, n := range before.restarts {
		if after.restarts[key] != n {
			t.Errorf("%s: %d restarts, was %d", key, after.restarts[key], n)
		}
	}
	replicaSets, err := c.kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(replicaSets.Items) != 3 {
		t.Errorf("%d ReplicaSets, want the original 3 (a new one means a rollout)", len(replicaSets.Items))
	}
	c.checkMigratedYurtAppSet(t, ctx, ns, before)

	// The NodePools are served with their nodes, which keep their labels and taints.
	pollUntil(t, ctrlTimeout, "the NodePools report their nodes", func() error {
		// Read through the API, not kubectl: its discovery cache still names the CRD's v1beta2.
		for pool, node := range nodes {
			np, err := c.dyn.Resource(poolsV1a1).Get(ctx, pool, metav1.GetOptions{})
			if err != nil {
				return err
			}
			members, _, _ := unstructured.NestedStringSlice(np.Object, "status", "nodes")
			if !slices.Contains(members, node) {
				return fmt.Errorf("NodePool %s: nodes %v, want %s", pool, members, node)
			}
		}
		return nil
	})
	if nodesAfter := c.nodeState(t, ctx, nodes); fmt.Sprint(nodesAfter) != fmt.Sprint(nodesBefore) {
		t.Errorf("the nodes changed:\nbefore %v\nafter  %v", nodesBefore, nodesAfter)
	}
}

// openYurtV17YAS is a YurtAppSet as OpenYurt v1.7 stores it in its CRD: one pool, whose tweak sets its
// replicas and the image of its container.
const openYurtV17YAS = `apiVersion: apps.openyurt.io/v1beta1
kind: YurtAppSet
metadata: {name: web}
spec:
  revisionHistoryLimit: 10
  pools: [shanghai]
  workload:
    workloadTemplate:
      deploymentTemplate:
        metadata: {labels: {app: web}, annotations: {team: storefront}}
        spec:
          replicas: 1
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec:
              nodeSelector: {topology.example.com/zone: shanghai}
              containers: [{name: web, image: "nginx:1.25"}]
    workloadTweaks:
    - pools: [shanghai]
      tweaks:
        replicas: 2
        containerImages: [{name: web, targetImage: "nginx:1.25.3"}]
`

// yurtManagerRevisionName names a YurtAppSet's revision as yurt-manager does (Kubernetes' controller
// history): "<yas>-<hash>", the FNV-32 of the revision's data (spec.workload as a replacing patch, with
// the keys sorted) with no collision, encoded by rand.SafeEncodeString.
func yurtManagerRevisionName(yas *unstructured.Unstructured) string {
	workload, _, _ := unstructured.NestedMap(yas.Object, "spec", "workload")
	workload["$patch"] = "replace"
	data, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"workload": workload}})
	h := fnv.New32()
	_, _ = h.Write(data)
	_, _ = h.Write([]byte("0"))
	return yas.GetName() + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// installOpenYurtV17YurtAppSet creates the YurtAppSet web in its CRD and the Deployment yurt-manager
// rendered for its pool (workloadmanager's ApplyTemplate): generated name "web-shanghai-", the template's
// labels and annotations plus pool-name, controller-revision-hash (its revision's name) and
// ref-yurtappset, the ref-nodepool annotation, a controller reference to the YurtAppSet, the selector and
// pod labels with pool-name (and the pods with the revision), the pool's nodeSelector merged into the
// template's, the pool's tweak applied (2 replicas, image nginx:1.25.3). It waits for its pods.
func (c *migrationCluster) installOpenYurtV17YurtAppSet(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	c.mustKubectl(t, openYurtV17YAS, "create", "-n", ns, "-f", "-")
	yas, err := c.dyn.Resource(yasV1b1).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := "shanghai"
	revision := yurtManagerRevisionName(yas)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-" + pool + "-", Namespace: ns,
			Labels: map[string]string{"app": "web", "apps.openyurt.io/pool-name": pool, "apps.openyurt.io/controller-revision-hash": revision,
				"apps.openyurt.io/ref-yurtappset": "web"},
			Annotations: map[string]string{"team": "storefront", "apps.openyurt.io/ref-nodepool": pool},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.openyurt.io/v1beta1", Kind: "YurtAppSet", Name: "web",
				UID: yas.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "apps.openyurt.io/pool-name": pool}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "apps.openyurt.io/pool-name": pool,
					"apps.openyurt.io/controller-revision-hash": revision}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"topology.example.com/zone": pool, "apps.openyurt.io/nodepool": pool},
					Containers:   []corev1.Container{{Name: "web", Image: "nginx:1.25.3"}},
				},
			},
		},
	}
	if _, err := c.kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Its revision, as yurt-manager records it: labelled ref-yurtappset, controlled by the YurtAppSet.
	workload, _, _ := unstructured.NestedMap(yas.Object, "spec", "workload")
	workload["$patch"] = "replace"
	data, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"workload": workload}})
	if _, err := c.kube.AppsV1().ControllerRevisions(ns).Create(ctx, &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: revision, Namespace: ns, Labels: map[string]string{"apps.openyurt.io/ref-yurtappset": "web"},
			OwnerReferences: d.OwnerReferences},
		Data:     runtime.RawExtension{Raw: data},
		Revision: 1,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitAppPodsReady(t, ctx, ns, "app=web", 2)
}

// checkMigratedYurtAppSet checks that tapp-apiserver manages the migrated YurtAppSet web: its status counts
// the adopted Deployment (ready and updated, at the current revision) with its pods unchanged, and a change
// of its template rolls that Deployment's pods, keeping the Deployment.
func (c *migrationCluster) checkMigratedYurtAppSet(t *testing.T, ctx context.Context, ns string, before snapshot) {
	t.Helper()
	deployments, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: "apps.openyurt.io/ref-yurtappset=web"})
	if err != nil || len(deployments.Items) != 1 {
		t.Fatalf("the YurtAppSet's Deployments: %v (%v)", deployments, err)
	}
	name, uid := deployments.Items[0].Name, deployments.Items[0].UID
	if before.uids["deployment/"+name] != uid {
		t.Fatalf("Deployment %s: uid %s, was %s", name, uid, before.uids["deployment/"+name])
	}
	status := func(want string) func() error {
		return func() error {
			yas, err := c.dyn.Resource(yasV1b1).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			observed, _, _ := unstructured.NestedInt64(yas.Object, "status", "observedGeneration")
			total, _, _ := unstructured.NestedInt64(yas.Object, "status", "totalWorkloads")
			ready, _, _ := unstructured.NestedInt64(yas.Object, "status", "readyWorkloads")
			updated, _, _ := unstructured.NestedInt64(yas.Object, "status", "updatedWorkloads")
			current, _, _ := unstructured.NestedString(yas.Object, "status", "currentRevision")
			d, err := c.kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			got := fmt.Sprintf("observed %v total %d ready %d updated %d, Deployment at current %v (uid %s)", observed == yas.GetGeneration(), total, ready, updated,
				d.Labels["apps.openyurt.io/controller-revision-hash"] == current && current != "", d.UID)
			if got != fmt.Sprintf(want, uid) {
				return fmt.Errorf("status: %s, want %s", got, fmt.Sprintf(want, uid))
			}
			return nil
		}
	}
	pollUntil(t, ctrlTimeout, "the YurtAppSet counts its adopted Deployment", status("observed true total 1 ready 1 updated 1, Deployment at current true (uid %s)"))
	// yurt-manager's revision is kept, orphaned: tapp-apiserver records its own history.
	revisions, err := c.kube.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{LabelSelector: "apps.openyurt.io/ref-yurtappset=web"})
	if err != nil {
		t.Fatal(err)
	}
	orphans := 0
	for _, r := range revisions.Items {
		if len(r.OwnerReferences) == 0 && r.Revision == 1 {
			orphans++
		}
	}
	if orphans != 1 || len(revisions.Items) != 2 {
		t.Errorf("the YurtAppSet's ControllerRevisions: %d, %d of them yurt-manager's orphaned one, want 2 and 1", len(revisions.Items), orphans)
	}
	after := c.snapshot(t, ctx, ns)
	for key, id := range before.uids {
		if after.uids[key] != id {
			t.Errorf("%s: uid %s, was %s once the YurtAppSet reports its workload", key, after.uids[key], id)
		}
	}
	for key, n := range before.restarts {
		if after.restarts[key] != n {
			t.Errorf("%s: %d restarts, was %d once the YurtAppSet reports its workload", key, after.restarts[key], n)
		}
	}

	// A change of the template through tapp-apiserver rolls the pods of the adopted Deployment.
	patch := `{"spec":{"workload":{"workloadTemplate":{"deploymentTemplate":{"spec":{"template":{"metadata":{"annotations":{"example.com/rollout":"1"}}}}}}}}}`
	if _, err := c.dyn.Resource(yasV1b1).Namespace(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 2*time.Minute, "the adopted Deployment rolls its pods", func() error {
		pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		rolled := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if before.uids["pod/"+p.Name] != "" || p.DeletionTimestamp != nil {
				return fmt.Errorf("pod %s of the original rendering is still there", p.Name)
			}
			if p.Annotations["example.com/rollout"] == "1" && p.Spec.Containers[0].Image == "nginx:1.25.3" && podReady(p) {
				rolled++
			}
		}
		if rolled != 2 {
			return fmt.Errorf("%d of 2 new pods Ready: %s", rolled, describePodList(pods.Items))
		}
		return nil
	})
	pollUntil(t, ctrlTimeout, "the YurtAppSet reports the rolled Deployment", status("observed true total 1 ready 1 updated 1, Deployment at current true (uid %s)"))
}
