package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const apiServiceFile = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.apps.tkestack.io
spec:
  group: apps.tkestack.io
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {namespace: tapp-system, name: tapp-apiserver, port: 443}
  caBundle: Y2E=
`

func mustUnstructured(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// tappCRD is tkestack/tapp's CRD as an apiextensions v1 object.
func tappCRD(t *testing.T) *unstructured.Unstructured {
	return mustUnstructured(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: tapps.apps.tkestack.io, uid: crd-uid}
spec:
  group: apps.tkestack.io
  names: {kind: TApp, listKind: TAppList, plural: tapps, singular: tapp}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
`)
}

// originalTApp is a TApp as tkestack/tapp left it: defaults written back, decimal hash labels in the template.
func originalTApp(t *testing.T, spec string) *unstructured.Unstructured {
	if spec == "" {
		spec = `
  replicas: 2
  selector: {matchLabels: {app: web}}
  defaultTemplateName: default
  updateStrategy: {template: default, maxUnavailable: 1}
  template:
    metadata:
      labels: {app: web, tapp_template_hash_key: "8571628173525391740", tapp_uniq_hash_key: "1234567890123456789"}
    spec:
      containers:
      - {name: web, image: "nginx:1.25"}`
	}
	return mustUnstructured(t, `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: web
  namespace: default
  uid: old-uid
  resourceVersion: "42"
  labels: {app: web}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"kind":"TApp"}'
    team: a
spec:`+spec+`
status:
  replicas: 2
  appStatus: Running
  statuses: {"0": Running, "1": Running}
`)
}

func originalPod(id string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-" + id, Namespace: "default", UID: types.UID("pod-uid-" + id),
			Labels: map[string]string{"app": "web", tkestack.InstanceIDLabel: id,
				tkestack.TemplateHashLabel: "8571628173525391740", tkestack.UniqHashLabel: "1234567890123456789"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "web", UID: "old-uid", Controller: ptr.To(true)}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "web", RestartCount: 2}}},
	}
}

var tappGVR = schema.GroupVersionResource{Group: tkestackGroup, Version: "v1", Resource: "tapps"}

func newDynamic(objects ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		crdGVR:        "CustomResourceDefinitionList",
		apiServiceGVR: "APIServiceList",
		tappGVR:       "TAppList",
		{Group: openyurtGroup, Version: "v1alpha1", Resource: "nodepools"}:      "NodePoolList",
		{Group: openyurtGroup, Version: "v1beta1", Resource: "nodepools"}:       "NodePoolList",
		{Group: openyurtGroup, Version: "v1beta2", Resource: "nodepools"}:       "NodePoolList",
		{Group: openyurtGroup, Version: "v1alpha1", Resource: "yurtappdaemons"}: "YurtAppDaemonList",
		{Group: openyurtGroup, Version: "v1beta1", Resource: "yurtappsets"}:     "YurtAppSetList",
	}, objects...)
}

type fixture struct {
	kube    *kubefake.Clientset
	dynamic *dynamicfake.FakeDynamicClient
	out     bytes.Buffer
	m       *Migrator
	dir     string
}

func newFixture(t *testing.T, kubeObjects []runtime.Object, dynamicObjects ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{kube: kubefake.NewClientset(kubeObjects...), dynamic: newDynamic(dynamicObjects...), dir: t.TempDir()}
	apiServices := filepath.Join(f.dir, "apiservices.yaml")
	if err := os.WriteFile(apiServices, []byte(apiServiceFile), 0o644); err != nil {
		t.Fatal(err)
	}
	f.m = &Migrator{
		Options: Options{APIServiceFile: apiServices, BackupFile: filepath.Join(f.dir, "backup.yaml"), Timeout: 3 * time.Second},
		Kube:    f.kube, Dynamic: f.dynamic, Out: &f.out,
		Now: func() time.Time { return testNow }, Interval: 10 * time.Millisecond,
	}
	return f
}

// mutations lists the writes both fake clients received.
func (f *fixture) mutations() []string {
	var out []string
	for _, a := range append(f.kube.Actions(), f.dynamic.Actions()...) {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	return out
}

// simulateCluster makes the fakes behave like the cluster parts migrate relies on: the garbage collector
// removes ownerReferences of an orphan-deleted TApp, the aggregator marks APIServices Available, and
// tapp-apiserver's TApp controller adopts and relabels the pods of a created TApp and reports them.
func (f *fixture) simulateCluster(t *testing.T) {
	f.dynamic.PrependReactor("delete", "tapps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		if d.GetDeleteOptions().PropagationPolicy == nil || *d.GetDeleteOptions().PropagationPolicy != metav1.DeletePropagationOrphan {
			t.Errorf("TApp %s deleted without orphan propagation", d.GetName())
		}
		pods, _ := f.kube.CoreV1().Pods(d.GetNamespace()).List(context.Background(), metav1.ListOptions{})
		for i := range pods.Items {
			p := pods.Items[i]
			p.OwnerReferences = nil
			if _, err := f.kube.CoreV1().Pods(p.Namespace).Update(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
		}
		return false, nil, nil
	})
	f.dynamic.PrependReactor("create", "apiservices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		_ = unstructured.SetNestedSlice(u.Object, []interface{}{map[string]interface{}{"type": "Available", "status": "True"}}, "status", "conditions")
		return false, nil, nil
	})
	f.dynamic.PrependReactor("create", "tapps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		u.SetUID("new-uid")
		u.SetGeneration(1)
		_ = unstructured.SetNestedField(u.Object, int64(1), "status", "observedGeneration")
		statuses := map[string]interface{}{}
		pods, _ := f.kube.CoreV1().Pods(u.GetNamespace()).List(context.Background(), metav1.ListOptions{})
		for i := range pods.Items {
			p := pods.Items[i]
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: u.GetName(), UID: "new-uid", Controller: ptr.To(true)}}
			p.Labels[tkestack.TemplateHashLabel], p.Labels[tkestack.UniqHashLabel] = "0123456789", "abcdef0123"
			if _, err := f.kube.CoreV1().Pods(p.Namespace).Update(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
			statuses[p.Labels[tkestack.InstanceIDLabel]] = "Running"
		}
		_ = unstructured.SetNestedMap(u.Object, statuses, "status", "statuses")
		return false, nil, nil
	})
}

func TestRefusesWhileTheOriginalRuns(t *testing.T) {
	recent := metav1.NewMicroTime(testNow.Add(-3 * time.Second))
	old := metav1.NewMicroTime(testNow.Add(-time.Hour))
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		force   bool
		want    string // "" means no problem about the original
	}{
		{name: "deployment with ready replicas", objects: []runtime.Object{&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "tapp-controller", Namespace: "kube-system"},
			Status:     appsv1.DeploymentStatus{ReadyReplicas: 1}}},
			want: "Deployment kube-system/tapp-controller: the original controller tapp-controller still runs (1 ready replicas)"},
		{name: "deployment found by its image", objects: []runtime.Object{&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "tapp", Namespace: "ops"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "c", Image: "ccr.ccs.tencentyun.com/tke-public/tapp-controller:v1.2.1"}}}}},
			Status: appsv1.DeploymentStatus{ReadyReplicas: 2}}},
			want: "Deployment ops/tapp"},
		{name: "deployment scaled to zero", objects: []runtime.Object{&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "tapp-controller", Namespace: "kube-system"}}}},
		{name: "lease renewed recently", objects: []runtime.Object{&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "tapp-controller", Namespace: "kube-system"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-a"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &recent}}},
			want: `Lease kube-system/tapp-controller: the leader lock of tapp-controller is held by "node-a" and was renewed 3s ago`},
		{name: "lease expired", objects: []runtime.Object{&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "tapp-controller", Namespace: "kube-system"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-a"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &old}}}},
		{name: "endpoints lock renewed recently", objects: []runtime.Object{&corev1.Endpoints{ //nolint:staticcheck // the original's lock
			ObjectMeta: metav1.ObjectMeta{Name: "tapp-controller", Namespace: "kube-system", Annotations: map[string]string{
				leaderAnnotation: `{"holderIdentity":"pod-1","leaseDurationSeconds":15,"renewTime":"` + testNow.Add(-10*time.Second).Format(time.RFC3339) + `"}`}}}},
			want: `Endpoints kube-system/tapp-controller: the leader lock of tapp-controller is held by "pod-1"`},
		{name: "configmap lock renewed recently", objects: []runtime.Object{&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "tapp-controller", Namespace: "kube-system", Annotations: map[string]string{
				leaderAnnotation: `{"holderIdentity":"pod-1","leaseDurationSeconds":15,"renewTime":"` + testNow.Format(time.RFC3339) + `"}`}}}},
			want: "ConfigMap kube-system/tapp-controller"},
		{name: "force skips the check", force: true, objects: []runtime.Object{&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "tapp-controller", Namespace: "kube-system"},
			Status:     appsv1.DeploymentStatus{ReadyReplicas: 1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.objects, tappCRD(t), originalTApp(t, ""))
			f.m.Force = tc.force
			f.m.DryRun = true // a refusal must happen before any change; the dry run stops right after
			err := f.m.Run(context.Background())
			var problems Problems
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected refusal: %v", err)
			case tc.want != "" && !errors.As(err, &problems):
				t.Fatalf("err = %v, want a refusal naming %q", err, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("refusal does not contain %q:\n%v", tc.want, err)
			case tc.want != "" && !strings.Contains(err.Error(), "--force"):
				t.Fatalf("refusal does not say what to do:\n%v", err)
			}
			if m := f.mutations(); len(m) > 0 {
				t.Fatalf("changes made: %v", m)
			}
		})
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	f := newFixture(t, []runtime.Object{originalPod("0"), originalPod("1"), &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "tapp-admission"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "tapp-controller.kube-system.svc", Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{tkestackGroup}, APIVersions: []string{"v1"}, Resources: []string{"tapps"}}}}}},
	}}, tappCRD(t), originalTApp(t, ""))
	f.m.DryRun = true
	if err := f.m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := f.mutations(); len(m) > 0 {
		t.Fatalf("the dry run made changes: %v", m)
	}
	if _, err := os.Stat(f.m.BackupFile); !os.IsNotExist(err) {
		t.Fatalf("the dry run wrote the backup file (stat: %v)", err)
	}
	for _, want := range []string{
		"dry run: nothing is changed",
		"remove ValidatingWebhookConfiguration tapp-admission",
		"delete TApp default/web (orphan propagation), orphaning 2 pods",
		"delete CustomResourceDefinition tapps.apps.tkestack.io",
		"register APIService v1.apps.tkestack.io",
		"create TApp default/web (apps.tkestack.io/v1) and wait until it has adopted 2 pods",
	} {
		if !strings.Contains(f.out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, f.out.String())
		}
	}
}

func TestMigrates(t *testing.T) {
	f := newFixture(t, []runtime.Object{originalPod("0"), originalPod("1")}, tappCRD(t), originalTApp(t, ""))
	f.simulateCluster(t)
	if err := f.m.Run(context.Background()); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, f.out.String())
	}
	// The backup holds the TApp, its pods and the CRD.
	b, err := loadBackup(f.m.BackupFile)
	if err != nil || b == nil {
		t.Fatalf("backup: %v, %v", b, err)
	}
	if len(b.Entries) != 1 || len(b.Entries[0].Dependents) != 2 || b.Entries[0].Dependents[0].UID != "pod-uid-0" || b.Entries[0].Dependents[0].Restarts != 2 {
		t.Fatalf("backup entries = %+v", b.Entries)
	}
	if len(b.CRDs) != 1 || b.CRDs[0].GetName() != "tapps.apps.tkestack.io" {
		t.Fatalf("backup CRDs = %v", b.CRDs)
	}
	// The CRD is gone, the TApp is created again with its spec, labels and annotations minus last-applied.
	if _, err := f.dynamic.Resource(crdGVR).Get(context.Background(), "tapps.apps.tkestack.io", metav1.GetOptions{}); err == nil {
		t.Fatal("the CRD still exists")
	}
	created, err := f.dynamic.Resource(tappGVR).Namespace("default").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := created.GetAnnotations()[lastApplied]; ok || created.GetAnnotations()["team"] != "a" {
		t.Errorf("annotations = %v", created.GetAnnotations())
	}
	wantSpec := originalTApp(t, "").Object["spec"]
	if !equalJSON(created.Object["spec"], wantSpec) {
		t.Errorf("spec = %v, want %v", created.Object["spec"], wantSpec)
	}
	for _, want := range []string{
		"backed up 1 object(s)",
		"deleted TApp default/web, orphaning 2 pods",
		"deleted CustomResourceDefinition tapps.apps.tkestack.io",
		"registered APIService v1.apps.tkestack.io (Available)",
		"created TApp default/web on tapp-apiserver",
		"TApp default/web: 2/2 pods and claims adopted with their UIDs (pods: 2 relabelled, 0 updated in place, 0 left for update), 0 replaced, 0 gone, 0 conflicts",
	} {
		if !strings.Contains(f.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, f.out.String())
		}
	}
}

func TestResumesFromTheBackupOnceTheCRDIsGone(t *testing.T) {
	// A first run stopped right after deleting the CRD: the pods are orphans, the backup file holds the TApp.
	f := newFixture(t, nil)
	var pods []runtime.Object
	for _, id := range []string{"0", "1"} {
		p := originalPod(id)
		p.OwnerReferences = nil
		pods = append(pods, p)
	}
	f.kube = kubefake.NewClientset(pods...)
	f.m.Kube = f.kube
	f.simulateCluster(t)
	backup := &Backup{CRDs: []*unstructured.Unstructured{tappCRD(t)}, Entries: []*Entry{{Object: originalTApp(t, ""), Dependents: []Dependent{
		{Kind: "Pod", Name: "web-0", UID: "pod-uid-0", Restarts: 2, Labels: originalPod("0").Labels},
		{Kind: "Pod", Name: "web-1", UID: "pod-uid-1", Restarts: 2, Labels: originalPod("1").Labels},
	}}}}
	if err := saveBackup(f.m.BackupFile, backup); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Run(context.Background()); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, f.out.String())
	}
	if !strings.Contains(f.out.String(), "TApp default/web: 2/2 pods and claims adopted with their UIDs") {
		t.Fatalf("output:\n%s", f.out.String())
	}
	if _, err := f.dynamic.Resource(tappGVR).Namespace("default").Get(context.Background(), "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Run again: everything is done, it reports again without creating anything twice.
	f.out.Reset()
	if err := f.m.Run(context.Background()); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, f.out.String())
	}
	if !strings.Contains(f.out.String(), "TApp default/web exists on tapp-apiserver already") {
		t.Fatalf("second run output:\n%s", f.out.String())
	}
}

func TestRefusesWithoutCRDAndBackup(t *testing.T) {
	f := newFixture(t, nil)
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "there is nothing to migrate") || !strings.Contains(err.Error(), "--backup-file") {
		t.Fatalf("err = %v", err)
	}
}

func TestRefusesAnotherBackupFileOfAStartedMigration(t *testing.T) {
	crd := tappCRD(t)
	crd.SetAnnotations(map[string]string{backupFileAnnotation: "/elsewhere/backup.yaml"})
	f := newFixture(t, nil, crd)
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--backup-file=/elsewhere/backup.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func TestRefusesObjectsTheServerWouldRefuse(t *testing.T) {
	// The original ignored spec.statuses values other than Killed; this server refuses them.
	bad := originalTApp(t, `
  replicas: 1
  selector: {matchLabels: {app: web}}
  statuses: {"0": Running}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1.25"}`)
	f := newFixture(t, nil, tappCRD(t), bad)
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "TApp default/web: tapp-apiserver would refuse it") ||
		!strings.Contains(err.Error(), "spec.statuses") || !strings.Contains(err.Error(), "kubectl edit") {
		t.Fatalf("err = %v", err)
	}
	if m := f.mutations(); len(m) > 0 {
		t.Fatalf("changes made: %v", m)
	}
}

func TestRefusesCRDsSharingARegisteredVersion(t *testing.T) {
	other := mustUnstructured(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.apps.tkestack.io}
spec:
  group: apps.tkestack.io
  versions: [{name: v1, served: true, storage: true}]
`)
	f := newFixture(t, nil, tappCRD(t), other)
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "CustomResourceDefinition widgets.apps.tkestack.io: it also serves apps.tkestack.io/v1") {
		t.Fatalf("err = %v", err)
	}
}

func TestWebhooks(t *testing.T) {
	rule := func(groups ...string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{APIGroups: groups, Resources: []string{"*"}}}}
	}
	f := newFixture(t, []runtime.Object{
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tapp-admission"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "tapp-controller.kube-system.svc", Rules: rule(tkestackGroup)}}},
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "policy"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "all.policy.io", Rules: rule("*")}}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "pods.example.io", Rules: rule("")}}},
	})
	remove, edits, problems, err := f.m.originalWebhooks(context.Background(), []kind{tappKind(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(remove) != 1 || objectKey(remove[0]) != "ValidatingWebhookConfiguration tapp-admission" || len(edits) != 0 {
		t.Errorf("remove = %v, edits = %v", remove, edits)
	}
	if len(problems) != 1 || problems[0].Object != "MutatingWebhookConfiguration policy" || !strings.Contains(problems[0].Fix, "kubectl edit mutatingwebhookconfiguration policy") {
		t.Errorf("problems = %v", problems)
	}
}

func TestBackupRoundTrip(t *testing.T) {
	b := &Backup{CRDs: []*unstructured.Unstructured{tappCRD(t)}, Entries: []*Entry{{Object: originalTApp(t, ""),
		Dependents: []Dependent{{Kind: "Pod", Name: "web-0", UID: "u0", Labels: map[string]string{"a": "b"}, Restarts: 1}}}}}
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "resourceVersion") {
		t.Errorf("the backup keeps resourceVersion, kubectl create would refuse it:\n%s", data)
	}
	got, err := UnmarshalBackup(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.CRDs) != 1 || len(got.Entries) != 1 || got.Entries[0].Dependents[0].UID != "u0" || got.Entries[0].Object.GetUID() != "old-uid" {
		t.Fatalf("round trip = %+v", got)
	}
	if _, ok := got.Entries[0].Object.GetAnnotations()[dependentsAnnotation]; ok {
		t.Error("the dependents annotation was not taken off")
	}
	restored := restoreObject(got.Entries[0])
	if _, ok := restored.Object["status"]; ok || restored.GetUID() != "" || restored.GetResourceVersion() != "" {
		t.Errorf("restore object carries server fields: %v", restored.Object)
	}
	if _, ok := restored.GetAnnotations()[lastApplied]; ok {
		t.Error("restore object keeps last-applied-configuration")
	}
}

func equalJSON(a, b interface{}) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return string(x) == string(y)
}

func TestRefusesVersionsTheServerDoesNotServe(t *testing.T) {
	// OpenYurt's current CRD stores NodePools as v1beta2, which this server serves, but the APIService file
	// registers v1beta1 only: the pools would not be reachable in their version.
	crd := mustUnstructured(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nodepools.apps.openyurt.io}
spec:
  group: apps.openyurt.io
  versions:
  - {name: v1beta1, served: true, storage: false}
  - {name: v1beta2, served: true, storage: true}
`)
	pool := mustUnstructured(t, `apiVersion: apps.openyurt.io/v1beta2
kind: NodePool
metadata: {name: hangzhou, uid: pool-uid}
spec: {type: Edge, enableLeaderElection: true, leaderReplicas: 3}
`)
	f := newFixture(t, nil, crd, pool)
	file := strings.ReplaceAll(apiServiceFile, "v1.apps.tkestack.io", "v1beta1.apps.openyurt.io")
	file = strings.ReplaceAll(strings.ReplaceAll(file, "group: apps.tkestack.io", "group: apps.openyurt.io"), "version: v1", "version: v1beta1")
	if err := os.WriteFile(f.m.APIServiceFile, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "NodePool hangzhou: it is stored as apps.openyurt.io/v1beta2, which the APIService file does not register") {
		t.Fatalf("err = %v", err)
	}
	if m := f.mutations(); len(m) > 0 {
		t.Fatalf("changes made: %v", m)
	}
}

func TestMigratesYurtAppDaemonsAndNodePools(t *testing.T) {
	crd := func(name, kind string, versions string) *unstructured.Unstructured {
		return mustUnstructured(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: `+name+`}
spec:
  group: apps.openyurt.io
  names: {kind: `+kind+`}
  versions: `+versions+`
`)
	}
	pool := mustUnstructured(t, `apiVersion: apps.openyurt.io/v1alpha1
kind: NodePool
metadata: {name: hangzhou, uid: pool-uid, labels: {region: hangzhou}}
spec:
  type: Edge
  selector: {matchLabels: {apps.openyurt.io/nodepool: hangzhou}}
  labels: {zone: east}
  annotations: {owner: team-a}
  taints: [{key: edge, value: "true", effect: NoSchedule}]
`)
	yad := mustUnstructured(t, `apiVersion: apps.openyurt.io/v1alpha1
kind: YurtAppDaemon
metadata: {name: edge, namespace: default, uid: old-yad-uid}
spec:
  selector: {matchLabels: {app: edge}}
  nodepoolSelector: {matchLabels: {region: hangzhou}}
  workloadTemplate:
    deploymentTemplate:
      metadata: {labels: {app: edge}}
      spec:
        selector: {matchLabels: {app: edge}}
        template:
          metadata: {labels: {app: edge}}
          spec:
            containers: [{name: edge, image: "busybox:1.36"}]
`)
	child := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "edge-hangzhou-x7k2p", Namespace: "default", UID: "deploy-uid",
		Labels:          map[string]string{"app": "edge", "apps.openyurt.io/pool-name": "hangzhou"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.openyurt.io/v1alpha1", Kind: "YurtAppDaemon", Name: "edge", UID: "old-yad-uid", Controller: ptr.To(true)}}}}
	f := newFixture(t, []runtime.Object{child},
		crd("nodepools.apps.openyurt.io", "NodePool", "[{name: v1alpha1, served: true, storage: true}, {name: v1beta1, served: true, storage: false}]"),
		crd("yurtappdaemons.apps.openyurt.io", "YurtAppDaemon", "[{name: v1alpha1, served: true, storage: true}]"),
		pool, yad)
	file := strings.ReplaceAll(apiServiceFile, "v1.apps.tkestack.io", "v1alpha1.apps.openyurt.io")
	file = strings.ReplaceAll(strings.ReplaceAll(file, "group: apps.tkestack.io", "group: apps.openyurt.io"), "version: v1", "version: v1alpha1")
	if err := os.WriteFile(f.m.APIServiceFile, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	setChildOwner := func(uid types.UID) {
		d, _ := f.kube.AppsV1().Deployments("default").Get(context.Background(), child.Name, metav1.GetOptions{})
		d.OwnerReferences = nil
		if uid != "" {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.openyurt.io/v1alpha1", Kind: "YurtAppDaemon", Name: "edge", UID: uid, Controller: ptr.To(true)}}
		}
		if _, err := f.kube.AppsV1().Deployments("default").Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}
	f.dynamic.PrependReactor("delete", "yurtappdaemons", func(k8stesting.Action) (bool, runtime.Object, error) {
		setChildOwner("")
		return false, nil, nil
	})
	f.dynamic.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		switch u.GetKind() {
		case "APIService":
			_ = unstructured.SetNestedSlice(u.Object, []interface{}{map[string]interface{}{"type": "Available", "status": "True"}}, "status", "conditions")
		case "NodePool":
			u.SetUID("new-pool-uid")
			_ = unstructured.SetNestedStringSlice(u.Object, []string{"node-0", "node-2"}, "status", "nodes")
		case "YurtAppDaemon":
			u.SetUID("new-yad-uid")
			u.SetGeneration(1)
			_ = unstructured.SetNestedField(u.Object, int64(1), "status", "observedGeneration")
			setChildOwner("new-yad-uid")
		}
		return false, nil, nil
	})
	if err := f.m.Run(context.Background()); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, f.out.String())
	}
	for _, want := range []string{
		"warning: CRD nodepools.apps.openyurt.io serves apps.openyurt.io/v1beta1, which the APIService file does not register",
		"deleted YurtAppDaemon default/edge, orphaning 1 Deployment",
		"deleted CustomResourceDefinition yurtappdaemons.apps.openyurt.io",
		"NodePool hangzhou: served by tapp-apiserver with 2 nodes (node-0, node-2)",
		"YurtAppDaemon default/edge: 1/1 workloads adopted with their UIDs, 0 replaced, 0 gone, 0 conflicts",
	} {
		if !strings.Contains(f.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, f.out.String())
		}
	}
	// The NodePool keeps every spec field; NodePools are created before the YurtAppDaemons that select them.
	created, err := f.dynamic.Resource(schema.GroupVersionResource{Group: openyurtGroup, Version: "v1alpha1", Resource: "nodepools"}).
		Get(context.Background(), "hangzhou", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalJSON(created.Object["spec"], pool.Object["spec"]) || created.GetLabels()["region"] != "hangzhou" {
		t.Errorf("NodePool = %v, want the spec and labels of %v", created.Object, pool.Object)
	}
	var creates []string
	for _, a := range f.dynamic.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource != "apiservices" {
			creates = append(creates, a.GetResource().Resource)
		}
	}
	if strings.Join(creates, ",") != "nodepools,yurtappdaemons" {
		t.Errorf("creates in order %v, want nodepools before yurtappdaemons", creates)
	}
}

// TestWaitsUntilTheServersForgetTheRemovedWebhooks: kube-apiserver and tapp-apiserver learn of a removed
// webhook configuration from a watch, so the first writes after the removal may still call its webhooks.
// Migrate repeats them until they pass; a failure of any other webhook stops it.
func TestWaitsUntilTheServersForgetTheRemovedWebhooks(t *testing.T) {
	webhookError := func(name string) error {
		return apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: failed to call webhook: service %q not found", name, "tapp-controller"))
	}
	for _, tc := range []struct {
		name     string
		failing  string
		wantFail bool
	}{
		{name: "a removed webhook", failing: "tapp-controller.kube-system.svc"},
		{name: "another webhook", failing: "pods.example.io", wantFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tapp-admission"},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "tapp-controller.kube-system.svc",
					Rules: []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{APIGroups: []string{tkestackGroup}, Resources: []string{"*"}}}}}}}
			f := newFixture(t, []runtime.Object{hook, originalPod("0"), originalPod("1")}, tappCRD(t), originalTApp(t, ""))
			f.simulateCluster(t)
			calls := map[string]int{}
			for _, verb := range []string{"delete", "create"} {
				f.dynamic.PrependReactor(verb, "tapps", func(a k8stesting.Action) (bool, runtime.Object, error) {
					calls[verb]++
					if calls[verb] <= 2 {
						return true, nil, webhookError(tc.failing)
					}
					return false, nil, nil
				})
			}
			err := f.m.Run(context.Background())
			if tc.wantFail {
				if err == nil || !strings.Contains(err.Error(), `failed calling webhook "pods.example.io"`) || calls["delete"] != 1 {
					t.Fatalf("err = %v after %d deletes, want the other webhook's failure after one", err, calls["delete"])
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\noutput:\n%s", err, f.out.String())
			}
			if calls["delete"] != 3 || calls["create"] != 3 {
				t.Errorf("calls = %v, want 3 deletes and 3 creates", calls)
			}
			if !strings.Contains(f.out.String(), "created TApp default/web on tapp-apiserver") {
				t.Errorf("output:\n%s", f.out.String())
			}
		})
	}
}

func tappKind(t *testing.T) kind {
	k, ok := kindOf(tkestackGroup, "TApp")
	if !ok {
		t.Fatal("no TApp kind")
	}
	return k
}
