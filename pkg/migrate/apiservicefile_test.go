package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// copiedAPIService is `kubectl get apiservice v1.apps.tkestack.io -o yaml` of a cluster that runs
// tapp-apiserver, as users save it: everything the server set is there.
const copiedAPIService = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"annotations":{},"labels":{"app.kubernetes.io/name":"tapp-apiserver","app.kubernetes.io/part-of":"tapp-apiserver"},"name":"v1.apps.tkestack.io"},"spec":{"group":"apps.tkestack.io","groupPriorityMinimum":1000,"service":{"name":"tapp-apiserver","namespace":"tapp-system","port":443},"version":"v1","versionPriority":15}}
  creationTimestamp: "2026-11-20T08:15:02Z"
  labels:
    app.kubernetes.io/name: tapp-apiserver
    app.kubernetes.io/part-of: tapp-apiserver
  managedFields:
  - apiVersion: apiregistration.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels:
          .: {}
          f:app.kubernetes.io/name: {}
          f:app.kubernetes.io/part-of: {}
      f:spec:
        f:group: {}
        f:groupPriorityMinimum: {}
        f:service:
          .: {}
          f:name: {}
          f:namespace: {}
          f:port: {}
        f:version: {}
        f:versionPriority: {}
    manager: kubectl-client-side-apply
    operation: Update
    time: "2026-11-20T08:15:02Z"
  - apiVersion: apiregistration.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:caBundle: {}
    manager: kubectl-patch
    operation: Update
    time: "2026-11-20T08:15:40Z"
  - apiVersion: apiregistration.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:conditions:
          .: {}
          k:{"type":"Available"}:
            .: {}
            f:lastTransitionTime: {}
            f:message: {}
            f:reason: {}
            f:status: {}
            f:type: {}
    manager: kube-apiserver
    operation: Update
    subresource: status
    time: "2026-11-20T08:15:44Z"
  name: v1.apps.tkestack.io
  resourceVersion: "184312"
  uid: 6f1c7c0e-52a4-4c1e-9d0f-0b8f3f7e2a11
spec:
  caBundle: Y2E=
  group: apps.tkestack.io
  groupPriorityMinimum: 1000
  service:
    name: tapp-apiserver
    namespace: tapp-system
    port: 443
  version: v1
  versionPriority: 15
status:
  conditions:
  - lastTransitionTime: "2026-11-20T08:15:44Z"
    message: all checks passed
    reason: Passed
    status: "True"
    type: Available
`

// copiedAPIServiceList is `kubectl get apiservice v1.apps.tkestack.io v1alpha1.apps.openyurt.io -o yaml`:
// a List whose items carry the server's fields too.
func copiedAPIServiceList() string {
	item := strings.ReplaceAll(copiedAPIService, "\n", "\n  ")
	second := strings.NewReplacer("v1.apps.tkestack.io", "v1alpha1.apps.openyurt.io", "group: apps.tkestack.io", "group: apps.openyurt.io",
		"version: v1\n", "version: v1alpha1\n", `uid: 6f1c7c0e`, `uid: 7a2d8d1f`).Replace(copiedAPIService)
	second = strings.ReplaceAll(second, "\n", "\n  ")
	return "apiVersion: v1\nitems:\n- " + strings.TrimSpace(item) + "\n- " + strings.TrimSpace(second) +
		"\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "apiservices.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadsAPIServicesCopiedFromACluster: the fields the server set are dropped when the file is read
// (what is registered is the spec, labels and annotations), for one object and for a List, and a note says so.
func TestReadsAPIServicesCopiedFromACluster(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		names   []string
	}{
		{"one object", copiedAPIService, []string{"v1.apps.tkestack.io"}},
		{"a List", copiedAPIServiceList(), []string{"v1.apps.tkestack.io", "v1alpha1.apps.openyurt.io"}},
		{"an APIServiceList", strings.Replace(copiedAPIServiceList(), "kind: List", "kind: APIServiceList", 1), []string{"v1.apps.tkestack.io", "v1alpha1.apps.openyurt.io"}},
		{"a document beside another", copiedAPIService + "---\n" +
			strings.NewReplacer("v1.apps.tkestack.io", "v1beta1.apps.openyurt.io", "group: apps.tkestack.io", "group: apps.openyurt.io", "version: v1\n", "version: v1beta1\n").Replace(copiedAPIService),
			[]string{"v1.apps.tkestack.io", "v1beta1.apps.openyurt.io"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, registered, note, err := readAPIServices(writeFile(t, tc.content))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.names) {
				t.Fatalf("read %d APIServices, want %v", len(got), tc.names)
			}
			for i, u := range got {
				if u.GetName() != tc.names[i] {
					t.Errorf("APIService %d is %s, want %s", i, u.GetName(), tc.names[i])
				}
				meta := u.Object["metadata"].(map[string]interface{})
				for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields"} {
					if _, ok := meta[f]; ok {
						t.Errorf("%s: metadata.%s kept", u.GetName(), f)
					}
				}
				if _, ok := u.Object["status"]; ok {
					t.Errorf("%s: status kept", u.GetName())
				}
				if u.GetLabels()["app.kubernetes.io/name"] != "tapp-apiserver" || u.GetAnnotations()[lastApplied] == "" {
					t.Errorf("%s: labels or annotations lost: %v %v", u.GetName(), u.GetLabels(), u.GetAnnotations())
				}
				if ca, _, _ := unstructured.NestedString(u.Object, "spec", "caBundle"); ca != "Y2E=" {
					t.Errorf("%s: spec.caBundle = %q", u.GetName(), ca)
				}
			}
			if len(registered) == 0 {
				t.Errorf("registered = %v", registered)
			}
			for _, want := range []string{"metadata.creationTimestamp", "metadata.managedFields", "metadata.resourceVersion", "metadata.uid", "status"} {
				if !strings.Contains(note, want) {
					t.Errorf("note %q does not name %s", note, want)
				}
			}
		})
	}
	// A file written by hand has nothing to drop and no note.
	if _, _, note, err := readAPIServices(writeFile(t, apiServiceFile)); err != nil || note != "" {
		t.Errorf("hand-written file: note %q, err %v", note, err)
	}
}

// TestRefusesBadAPIServiceFilesBeforeChangingAnything: what would make the registration fail is refused
// when the file is read, before the backup, the deletions and the CRDs.
func TestRefusesBadAPIServiceFilesBeforeChangingAnything(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"the CRD's own APIService", strings.Replace(strings.Replace(copiedAPIService, "  labels:\n", "  labels:\n    kube-aggregator.kubernetes.io/automanaged: onstart\n", 1),
			"  service:\n    name: tapp-apiserver\n    namespace: tapp-system\n    port: 443\n", "", 1),
			"labelled kube-aggregator.kubernetes.io/automanaged=onstart"},
		{"a List holding another kind", strings.Replace(copiedAPIServiceList(), "kind: APIService\n", "kind: Service\n", 1), "is not an APIService"},
		{"a name that is not version.group", strings.Replace(copiedAPIService, "  name: v1.apps.tkestack.io\n", "  name: tapp.apps.tkestack.io\n", 1),
			"its name must be v1.apps.tkestack.io"},
		{"the same APIService twice", copiedAPIService + "---\n" + copiedAPIService, "appears twice"},
		{"an empty List", "apiVersion: v1\nkind: List\nitems: []\n", "holds no APIService"},
		{"another group", strings.Replace(copiedAPIService, "group: apps.tkestack.io", "group: apps", 1), "which tapp-apiserver does not serve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, []runtime.Object{originalPod("0"), originalPod("1")}, tappCRD(t), originalTApp(t, ""))
			f.simulateCluster(t)
			f.m.APIServiceFile = writeFile(t, tc.content)
			err := f.m.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if got := f.mutations(); len(got) != 0 {
				t.Errorf("changed the cluster before refusing: %v", got)
			}
			if _, statErr := os.Stat(f.m.BackupFile); statErr == nil {
				t.Errorf("wrote the backup file before refusing")
			}
		})
	}
}

// refuseServerFieldsOnCreate makes the fake refuse what kube-apiserver refuses on a create.
func refuseServerFieldsOnCreate(f *fixture) {
	f.dynamic.PrependReactor("create", "apiservices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		if u.GetResourceVersion() != "" {
			return true, nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
		}
		return false, nil, nil
	})
}

// TestMigratesWithAnAPIServiceFileCopiedFromACluster: the copied file registers what it describes, without
// the server's fields, and the migration completes.
func TestMigratesWithAnAPIServiceFileCopiedFromACluster(t *testing.T) {
	f := newFixture(t, []runtime.Object{originalPod("0"), originalPod("1")}, tappCRD(t), originalTApp(t, ""))
	f.simulateCluster(t)
	refuseServerFieldsOnCreate(f)
	f.m.APIServiceFile = writeFile(t, copiedAPIService)
	if err := f.m.Run(context.Background()); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, f.out.String())
	}
	got, err := f.dynamic.Resource(apiServiceGVR).Get(context.Background(), "v1.apps.tkestack.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetUID() == "6f1c7c0e-52a4-4c1e-9d0f-0b8f3f7e2a11" || len(got.GetManagedFields()) != 0 || got.GetCreationTimestamp().Year() == 2026 {
		t.Errorf("the server's fields of the copy were sent: %v", got.Object["metadata"])
	}
	for _, want := range []string{"ignoring the fields the API server sets", "registered APIService v1.apps.tkestack.io (Available)", "created TApp default/web on tapp-apiserver"} {
		if !strings.Contains(f.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, f.out.String())
		}
	}
}

// TestRegistrationRefusedForGoodStopsAtOnce: when the cluster refuses the APIService itself (400/422/403),
// migrate reports that error at once instead of repeating the create until its timeout.
func TestRegistrationRefusedForGoodStopsAtOnce(t *testing.T) {
	f := newFixture(t, []runtime.Object{originalPod("0"), originalPod("1")}, tappCRD(t), originalTApp(t, ""))
	f.simulateCluster(t)
	f.m.Timeout = time.Minute
	f.dynamic.PrependReactor("create", "apiservices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(apiServiceGVR.GroupVersion().WithKind("APIService").GroupKind(), "v1.apps.tkestack.io",
			nil)
	})
	start := time.Now()
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "APIService v1.apps.tkestack.io: registering it failed") || !strings.Contains(err.Error(), "is invalid") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s: the refused create was repeated", d)
	}
}

// rateLimiterError is what client-go returns when its rate limiter would have to wait past the deadline.
var rateLimiterError = fmt.Errorf("client rate limiter Wait returned an error: %w", errors.New("rate: Wait(n=1) would exceed context deadline"))

// TestWaitReportsTheLastRealError: a condition fails with a real error, then, near and past the deadline,
// with the deadline's own errors; the wait's error is the real one.
func TestWaitReportsTheLastRealError(t *testing.T) {
	m := &Migrator{Options: Options{Timeout: 300 * time.Millisecond}, Interval: 10 * time.Millisecond}
	real := apierrors.NewServiceUnavailable("etcd is unavailable")
	var calls atomic.Int32
	start := time.Now()
	err := m.waitUntil(context.Background(), func(ctx context.Context) (bool, error) {
		n := calls.Add(1)
		switch {
		case n <= 3:
			return false, real
		case ctx.Err() != nil:
			return false, fmt.Errorf("Get \"https://10.0.0.1/apis\": %w", ctx.Err())
		default:
			return false, rateLimiterError
		}
	})
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("returned before the timeout")
	}
	if err == nil || err.Error() != real.Error() || !errors.Is(err, real) {
		t.Fatalf("err = %v, want the last real error %v", err, real)
	}
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("the error does not unwrap to the real one: %#v", err)
	}
	if calls.Load() < 5 {
		t.Errorf("condition called %d times", calls.Load())
	}

	// The real error changes: the last one is reported.
	calls.Store(0)
	err = m.waitUntil(context.Background(), func(ctx context.Context) (bool, error) {
		if calls.Add(1) == 1 {
			return false, errors.New("first")
		}
		if time.Since(start) < time.Hour && calls.Load() < 4 {
			return false, errors.New("it still exists")
		}
		return false, rateLimiterError
	})
	if err == nil || err.Error() != "it still exists" {
		t.Errorf("err = %v, want the last real reason", err)
	}

	// Only the deadline's errors: one of them is reported rather than nothing.
	err = m.waitUntil(context.Background(), func(context.Context) (bool, error) { return false, rateLimiterError })
	if err == nil || !strings.Contains(err.Error(), "would exceed context deadline") {
		t.Errorf("err = %v", err)
	}
	// Nothing said: the timeout is.
	err = m.waitUntil(context.Background(), func(context.Context) (bool, error) { return false, nil })
	if err == nil || !strings.Contains(err.Error(), "not done after 300ms") {
		t.Errorf("err = %v", err)
	}
	// Done, and stopped.
	if err := m.waitUntil(context.Background(), func(context.Context) (bool, error) { return true, nil }); err != nil {
		t.Errorf("done: %v", err)
	}
	calls.Store(0)
	err = m.waitUntil(context.Background(), func(context.Context) (bool, error) { calls.Add(1); return false, stop(real) })
	if err != real || calls.Load() != 1 {
		t.Errorf("stop: err = %v after %d calls, want %v after 1", err, calls.Load(), real)
	}
}

// TestRegistrationTimeoutReportsTheRealError: the aggregator keeps refusing the create with a real error,
// and near the deadline the client's rate limiter refuses to wait; migrate's error names the real one.
func TestRegistrationTimeoutReportsTheRealError(t *testing.T) {
	f := newFixture(t, []runtime.Object{originalPod("0"), originalPod("1")}, tappCRD(t), originalTApp(t, ""))
	f.simulateCluster(t)
	f.m.Timeout = 400 * time.Millisecond
	var creates atomic.Int32
	f.dynamic.PrependReactor("create", "apiservices", func(k8stesting.Action) (bool, runtime.Object, error) {
		if creates.Add(1) <= 3 {
			return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		}
		return true, nil, rateLimiterError
	})
	err := f.m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "etcdserver: request timed out") || strings.Contains(err.Error(), "rate limiter") {
		t.Fatalf("err = %v, want the server's error, not the rate limiter's", err)
	}
	if creates.Load() <= 3 {
		t.Errorf("only %d creates: the rate limiter's error never came", creates.Load())
	}
}

// TestRestoresV1beta1HostNetworkPoolsWithTheAnnotation: a v1beta1 NodePool as OpenYurt stores it, with
// spec.hostNetwork and the annotation "true", is created with the field alone (which the server accepts);
// every other combination is created as stored, for the checks to judge.
func TestRestoresV1beta1HostNetworkPoolsWithTheAnnotation(t *testing.T) {
	pool := func(version, annotation string, hostNetwork bool) *Entry {
		u := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apps.openyurt.io/" + version, "kind": "NodePool",
			"metadata": map[string]interface{}{"name": "hz", "annotations": map[string]interface{}{"note": "x"}},
			"spec":     map[string]interface{}{"type": "Edge"},
		}}
		if annotation != "" {
			_ = unstructured.SetNestedField(u.Object, annotation, "metadata", "annotations", "nodepool.openyurt.io/hostnetwork")
		}
		if hostNetwork {
			_ = unstructured.SetNestedField(u.Object, true, "spec", "hostNetwork")
		}
		return &Entry{Object: u}
	}
	for _, tc := range []struct {
		entry *Entry
		want  string // the annotation created, "" for none
	}{
		{pool("v1beta1", "true", true), ""},
		{pool("v1beta1", "TRUE", true), "TRUE"},
		{pool("v1beta1", "true", false), "true"},
		{pool("v1alpha1", "true", false), "true"},
		{pool("v1beta1", "false", false), "false"},
	} {
		out := restoreObject(tc.entry)
		got := out.GetAnnotations()["nodepool.openyurt.io/hostnetwork"]
		if got != tc.want || out.GetAnnotations()["note"] != "x" {
			t.Errorf("%s: annotations %v, want the hostnetwork annotation %q", tc.entry.Object.Object, out.GetAnnotations(), tc.want)
		}
		if _, ok := tc.entry.Object.GetAnnotations()["nodepool.openyurt.io/hostnetwork"]; !ok {
			t.Errorf("restoreObject changed the backed-up object")
		}
		errs, err := validateForCreate(out)
		if err != nil {
			t.Fatal(err)
		}
		if valid := len(errs) == 0; valid != (tc.want != "true" || tc.entry.Object.GroupVersionKind().Version == "v1alpha1") {
			t.Errorf("%v: validation %v", out.Object, errs)
		}
	}
}
