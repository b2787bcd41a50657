package integration

import (
	"encoding/json"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
)

var tappsGR = schema.GroupResource{Group: "apps.tkestack.io", Resource: "tapps"}

func TestScaleTyped(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	created, err := tapps.Create(ctx, newTApp(ns, "scaled", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	withStatus := created.DeepCopy()
	withStatus.Status.Replicas = 2
	if _, err := tapps.UpdateStatus(ctx, withStatus, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}

	sc, err := tapps.GetScale(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	// The typed client drops apiVersion/kind when decoding; check the wire form.
	raw, err := cs.TKEStackAppsV1().RESTClient().Get().Namespace(ns).Resource("tapps").Name("scaled").SubResource("scale").Do(ctx).Raw()
	if err != nil {
		t.Fatalf("raw get scale: %v", err)
	}
	var typeMeta metav1.TypeMeta
	if err := json.Unmarshal(raw, &typeMeta); err != nil {
		t.Fatalf("decoding scale: %v", err)
	}
	if typeMeta.Kind != "Scale" || typeMeta.APIVersion != "autoscaling/v1" {
		t.Errorf("scale is %s %s on the wire, want autoscaling/v1 Scale", typeMeta.APIVersion, typeMeta.Kind)
	}
	if sc.Name != "scaled" || sc.Namespace != ns || sc.UID != created.UID {
		t.Errorf("scale metadata = %s/%s uid %s, want %s/scaled uid %s", sc.Namespace, sc.Name, sc.UID, ns, created.UID)
	}
	if sc.Spec.Replicas != 3 {
		t.Errorf("scale spec.replicas = %d, want 3", sc.Spec.Replicas)
	}
	if sc.Status.Replicas != 2 {
		t.Errorf("scale status.replicas = %d, want 2 (the TApp's status.replicas)", sc.Status.Replicas)
	}
	if sc.Status.Selector != "app=scaled" {
		t.Errorf("scale status.selector = %q, want app=scaled", sc.Status.Selector)
	}

	sc.Spec.Replicas = 5
	out, err := tapps.UpdateScale(ctx, "scaled", sc, metav1.UpdateOptions{FieldManager: "scaler"})
	if err != nil {
		t.Fatalf("update scale: %v", err)
	}
	if out.Spec.Replicas != 5 {
		t.Errorf("update scale returned spec.replicas %d, want 5", out.Spec.Replicas)
	}
	got := mustGetTApp(t, cs, ns, "scaled")
	if got.Spec.Replicas != 5 || got.Generation != 2 {
		t.Errorf("TApp after scale: replicas=%d generation=%d, want 5 and 2", got.Spec.Replicas, got.Generation)
	}
	if got.Status.Replicas != 2 {
		t.Errorf("TApp status.replicas after scale = %d, want 2 (scale does not touch status)", got.Status.Replicas)
	}
	if out.ResourceVersion != got.ResourceVersion {
		t.Errorf("scale resourceVersion %s != TApp resourceVersion %s", out.ResourceVersion, got.ResourceVersion)
	}

	// kubectl-scale-like ownership: the scale writer owns spec.replicas of the TApp.
	var scaler *metav1.ManagedFieldsEntry
	for i := range got.ManagedFields {
		if got.ManagedFields[i].Manager == "scaler" {
			scaler = &got.ManagedFields[i]
		}
	}
	if scaler == nil {
		t.Fatalf("managedFields have no entry for manager scaler: %+v", got.ManagedFields)
	}
	if scaler.Operation != metav1.ManagedFieldsOperationUpdate || scaler.Subresource != "scale" {
		t.Errorf("scaler entry operation=%s subresource=%q, want Update and scale", scaler.Operation, scaler.Subresource)
	}
	if scaler.APIVersion != "apps.tkestack.io/v1" {
		t.Errorf("scaler entry apiVersion = %q, want apps.tkestack.io/v1", scaler.APIVersion)
	}
	if !fieldsV1Has(t, scaler.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("scaler entry fieldsV1 = %s, want f:spec/f:replicas", scaler.FieldsV1.Raw)
	}

	// Negative replicas are invalid.
	sc, err = tapps.GetScale(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	neg := sc.DeepCopy()
	neg.Spec.Replicas = -1
	_, err = tapps.UpdateScale(ctx, "scaled", neg, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("scale to -1: got %v, want 422 Invalid", err)
	}
	if se := statusError(t, err); se.ErrStatus.Code != 422 || !strings.Contains(se.Error(), "spec.replicas") || !hasCause(se, "spec.replicas", "") {
		t.Errorf("scale to -1: code=%d message=%q causes=%v, want 422 mentioning spec.replicas", se.ErrStatus.Code, se.Error(), causeFields(se))
	}
	// Like kube-apiserver's scale subresources, the error is about the Scale the client sent.
	if d := statusError(t, err).ErrStatus.Details; d == nil || d.Kind != "Scale" || d.Group != "autoscaling" || d.Name != "scaled" {
		t.Errorf("scale to -1: details = %+v, want kind Scale, group autoscaling, name scaled", d)
	}
	// Above the maximum.
	big := sc.DeepCopy()
	big.Spec.Replicas = 100001
	if _, err := tapps.UpdateScale(ctx, "scaled", big, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("scale to 100001: got %v, want 422 Invalid", err)
	}

	// Stale resourceVersion.
	fresh := sc.DeepCopy()
	fresh.Spec.Replicas = 6
	if _, err := tapps.UpdateScale(ctx, "scaled", fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("scale to 6: %v", err)
	}
	stale := sc.DeepCopy()
	stale.Spec.Replicas = 8
	_, err = tapps.UpdateScale(ctx, "scaled", stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) || statusError(t, err).ErrStatus.Code != 409 {
		t.Errorf("scale with stale resourceVersion %s: got %v, want 409 Conflict", sc.ResourceVersion, err)
	}
	if got := mustGetTApp(t, cs, ns, "scaled"); got.Spec.Replicas != 6 {
		t.Errorf("replicas after rejected scales = %d, want 6", got.Spec.Replicas)
	}

	// An unconditional scale (no resourceVersion) is allowed.
	unconditional := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "scaled", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 2}}
	if out, err := tapps.UpdateScale(ctx, "scaled", unconditional, metav1.UpdateOptions{}); err != nil || out.Spec.Replicas != 2 {
		t.Errorf("scale without resourceVersion: got %v, %v, want replicas 2", out, err)
	}
	// A scale whose UID does not match the TApp's is a conflict.
	wrongUID := unconditional.DeepCopy()
	wrongUID.UID = "00000000-0000-0000-0000-000000000000"
	wrongUID.Spec.Replicas = 3
	if _, err := tapps.UpdateScale(ctx, "scaled", wrongUID, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("scale with a foreign uid: got %v, want 409 Conflict", err)
	}

	// Unknown TApp.
	if _, err := tapps.GetScale(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get scale of a missing TApp: got %v, want NotFound", err)
	}
	missing := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
	if _, err := tapps.UpdateScale(ctx, "missing", missing, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("update scale of a missing TApp: got %v, want NotFound", err)
	}
}

// newScaleClient builds the client kubectl scale and the HPA controller use: discovery resolves the scale
// kind, a REST mapper resolves the resource.
func newScaleClient(t testing.TB, cfg *rest.Config) scale.ScalesGetter {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(cfg))
	if err != nil {
		t.Fatalf("discovery client: %v", err)
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	sc, err := scale.NewForConfig(rest.CopyConfig(cfg), mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
	if err != nil {
		t.Fatalf("scale client: %v", err)
	}
	return sc
}

func TestScaleClient(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	if _, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, newTApp(ns, "hpa", 2), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	scales := newScaleClient(t, s.Config).Scales(ns)

	sc, err := scales.Get(ctx, tappsGR, "hpa", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("scale client get: %v", err)
	}
	if sc.Spec.Replicas != 2 || sc.Status.Selector != "app=hpa" {
		t.Errorf("scale client get: spec.replicas=%d status.selector=%q, want 2 and app=hpa", sc.Spec.Replicas, sc.Status.Selector)
	}

	sc.Spec.Replicas = 4
	updated, err := scales.Update(ctx, tappsGR, sc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("scale client update: %v", err)
	}
	if updated.Spec.Replicas != 4 {
		t.Errorf("scale client update returned spec.replicas %d, want 4", updated.Spec.Replicas)
	}
	if got := mustGetTApp(t, cs, ns, "hpa"); got.Spec.Replicas != 4 {
		t.Errorf("TApp replicas after scale client update = %d, want 4", got.Spec.Replicas)
	}

	gvr := tappsGR.WithVersion("v1")
	patched, err := scales.Patch(ctx, gvr, "hpa", types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("scale client merge patch: %v", err)
	}
	if patched.Spec.Replicas != 7 || patched.Status.Selector != "app=hpa" {
		t.Errorf("scale client patch returned spec.replicas=%d selector=%q, want 7 and app=hpa", patched.Spec.Replicas, patched.Status.Selector)
	}
	if got := mustGetTApp(t, cs, ns, "hpa"); got.Spec.Replicas != 7 {
		t.Errorf("TApp replicas after scale client patch = %d, want 7", got.Spec.Replicas)
	}

	// A JSON patch works too.
	if _, err := scales.Patch(ctx, gvr, "hpa", types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/replicas","value":1}]`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("scale client json patch: %v", err)
	}
	if got := mustGetTApp(t, cs, ns, "hpa"); got.Spec.Replicas != 1 {
		t.Errorf("TApp replicas after json patch = %d, want 1", got.Spec.Replicas)
	}

	// A patch to an invalid count is rejected with the field.
	_, err = scales.Patch(ctx, gvr, "hpa", types.MergePatchType, []byte(`{"spec":{"replicas":-1}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("scale patch to -1: got %v, want 422 mentioning spec.replicas", err)
	}

	// Stale resourceVersion through the scale client.
	stale := updated.DeepCopy()
	stale.Spec.Replicas = 9
	if _, err := scales.Update(ctx, tappsGR, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("scale client update with stale resourceVersion: got %v, want 409 Conflict", err)
	}
}
