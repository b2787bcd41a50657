// Package workloadtweak owns what a YurtAppSet's spec.workload.workloadTweaks do to the workload rendered
// for one pool: which tweaks select the pool (For), and how they change a Deployment or StatefulSet
// (ApplyToDeployment, ApplyToStatefulSet), and, for admission, which knows no pool, the workload every pool's
// rendering starts from (Base). Admission (pkg/apis/openyurt/validation, pkg/admission/podtemplate) and the
// YurtAppSet controller both apply tweaks through it, so a tweak the server accepts is a tweak the controller
// can apply.
//
// As OpenYurt applies them: the replicas and container images of every selecting tweak are applied first, in
// list order, then the patches of every selecting tweak, in list order; a later tweak wins. Patches are JSON
// patch operations (RFC 6902, with the semantics of gopkg.in/evanphx/json-patch.v4 that OpenYurt uses) on the
// whole workload object, with {{nodepool-name}} in a value replaced by the pool's name. Unlike OpenYurt, the
// patched object is decoded afresh (a removed label or annotation is gone, not kept from before the patch),
// strictly (a patch that sets a field the workload kind does not have, or a value of the wrong type, is an
// error), and a patch may not change what identifies the workload (see the Err* errors); identity labels a
// patch removes are put back, so that OpenYurt's own example, which replaces metadata.labels, applies.
package workloadtweak

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsjson "sigs.k8s.io/json"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
)

// IdentityLabels are the label keys of a workload and of its pod template that a patch may not change: the
// controller finds a pool's workload, and a workload's pool and revision, by them.
var IdentityLabels = []string{openyurt.PoolNameLabel, openyurt.YurtAppSetOwnerLabel, openyurt.RevisionHashLabel}

// ErrIdentityChanged is returned (wrapped) when the patches change the workload's apiVersion, kind, name,
// generateName, namespace, owner references, status, selector, or an IdentityLabels key of its labels or its
// pod template's labels.
var ErrIdentityChanged = errors.New("a patch may not change what identifies the workload")

// PatchError is the error of one patch: its index in the list ApplyTo* was given (counting the patches of
// every tweak in order), so that callers can point at it.
type PatchError struct {
	// Tweak is the index, in the tweaks given, of the tweak the patch belongs to.
	Tweak int
	// Patch is the index of the patch in that tweak's patches.
	Patch int
	// Err is what went wrong.
	Err error
}

func (e *PatchError) Error() string {
	return fmt.Sprintf("tweak %d, patch %d: %v", e.Tweak, e.Patch, e.Err)
}

func (e *PatchError) Unwrap() error { return e.Err }

// Selects reports whether tweak applies to the pool named poolName with labels poolLabels: the pool is
// named in tweak.Pools or matches tweak.NodePoolSelector. A selector that does not parse selects nothing
// (admission refuses it); an empty selector selects every pool.
func Selects(tweak *v1beta1.WorkloadTweak, poolName string, poolLabels map[string]string) bool {
	for _, p := range tweak.Pools {
		if p == poolName {
			return true
		}
	}
	if tweak.NodePoolSelector == nil {
		return false
	}
	selector, err := metav1.LabelSelectorAsSelector(tweak.NodePoolSelector)
	if err != nil {
		return false
	}
	return selector.Matches(labels.Set(poolLabels))
}

// For returns the tweaks of workloadTweaks that select the pool, in list order, sharing nothing with them.
func For(workloadTweaks []v1beta1.WorkloadTweak, poolName string, poolLabels map[string]string) []v1beta1.Tweaks {
	var out []v1beta1.Tweaks
	for i := range workloadTweaks {
		if Selects(&workloadTweaks[i], poolName, poolLabels) {
			out = append(out, *workloadTweaks[i].Tweaks.DeepCopy())
		}
	}
	return out
}

// ApplyToDeployment applies tweaks, in order, to d, the Deployment rendered for the pool named poolName. On
// error d is left unchanged; an error that one patch causes is a *PatchError naming it.
func ApplyToDeployment(d *appsv1.Deployment, poolName string, tweaks []v1beta1.Tweaks) error {
	return blame(d, poolName, tweaks, applyToDeployment)
}

// ApplyToStatefulSet is ApplyToDeployment for a StatefulSet.
func ApplyToStatefulSet(s *appsv1.StatefulSet, poolName string, tweaks []v1beta1.Tweaks) error {
	return blame(s, poolName, tweaks, applyToStatefulSet)
}

func applyToDeployment(d *appsv1.Deployment, poolName string, tweaks []v1beta1.Tweaks) error {
	out := d.DeepCopy()
	for _, t := range tweaks {
		if t.Replicas != nil {
			out.Spec.Replicas = ptrTo(*t.Replicas)
		}
		setImages(&out.Spec.Template.Spec, t.ContainerImages)
	}
	patched := &appsv1.Deployment{}
	if err := applyPatches(out, patched, poolName, tweaks); err != nil {
		return err
	}
	keepIdentityLabels(&out.Labels, &patched.Labels)
	keepIdentityLabels(&out.Spec.Template.Labels, &patched.Spec.Template.Labels)
	if err := checkIdentity(
		identityOf(&out.TypeMeta, &out.ObjectMeta, out.Status, out.Spec.Selector, out.Spec.Template.Labels),
		identityOf(&patched.TypeMeta, &patched.ObjectMeta, patched.Status, patched.Spec.Selector, patched.Spec.Template.Labels),
	); err != nil {
		return err
	}
	*d = *patched
	return nil
}

func applyToStatefulSet(s *appsv1.StatefulSet, poolName string, tweaks []v1beta1.Tweaks) error {
	out := s.DeepCopy()
	for _, t := range tweaks {
		if t.Replicas != nil {
			out.Spec.Replicas = ptrTo(*t.Replicas)
		}
		setImages(&out.Spec.Template.Spec, t.ContainerImages)
	}
	patched := &appsv1.StatefulSet{}
	if err := applyPatches(out, patched, poolName, tweaks); err != nil {
		return err
	}
	keepIdentityLabels(&out.Labels, &patched.Labels)
	keepIdentityLabels(&out.Spec.Template.Labels, &patched.Spec.Template.Labels)
	if err := checkIdentity(
		identityOf(&out.TypeMeta, &out.ObjectMeta, out.Status, out.Spec.Selector, out.Spec.Template.Labels),
		identityOf(&patched.TypeMeta, &patched.ObjectMeta, patched.Status, patched.Spec.Selector, patched.Spec.Template.Labels),
	); err != nil {
		return err
	}
	*s = *patched
	return nil
}

// maxBlamedPatches bounds the patches blame tries one prefix at a time (each try applies the prefix again).
const maxBlamedPatches = 64

// blame runs apply; when it fails for the patched object as a whole (it does not decode, or its identity
// changed), it applies ever longer prefixes of the patches to a copy of obj to find the first patch after
// which that happens, and returns the error as that patch's *PatchError. With more than maxBlamedPatches
// patches the error is returned as it is.
func blame[T interface{ DeepCopy() T }](obj T, poolName string, tweaks []v1beta1.Tweaks, apply func(T, string, []v1beta1.Tweaks) error) error {
	err := apply(obj, poolName, tweaks)
	var pe *PatchError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	patches := 0
	for i := range tweaks {
		patches += len(tweaks[i].Patches)
	}
	if patches > maxBlamedPatches {
		return err
	}
	for i := range tweaks {
		for j := range tweaks[i].Patches {
			prefix := make([]v1beta1.Tweaks, i+1)
			copy(prefix, tweaks[:i+1])
			prefix[i].Patches = tweaks[i].Patches[:j+1]
			if prefixErr := apply(obj.DeepCopy(), poolName, prefix); prefixErr != nil {
				return &PatchError{Tweak: i, Patch: j, Err: prefixErr}
			}
		}
	}
	return err
}

// setImages sets the image of every container and init container named in images.
func setImages(spec *corev1.PodSpec, images []v1beta1.ContainerImage) {
	for _, image := range images {
		for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
			for i := range containers {
				if containers[i].Name == image.Name {
					containers[i].Image = image.TargetImage
				}
			}
		}
	}
}

// patchOperation is one operation of an RFC 6902 document.
type patchOperation struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// applyPatches applies the patches of tweaks to in and decodes the result strictly into out. With no
// patches out is in, unencoded. The patches are applied as one document; when that fails they are applied
// again one at a time, so that the error names its patch.
func applyPatches[T any](in, out *T, poolName string, tweaks []v1beta1.Tweaks) error {
	if !hasPatches(tweaks) {
		*out = *in
		return nil
	}
	doc, err := json.Marshal(in)
	if err != nil {
		return err
	}
	var ops []patchOperation
	for i, t := range tweaks {
		for j, p := range t.Patches {
			op, err := operation(p, poolName)
			if err != nil {
				return &PatchError{Tweak: i, Patch: j, Err: err}
			}
			ops = append(ops, op)
		}
	}
	patched, err := apply(doc, ops)
	if err != nil {
		return locate(doc, tweaks, ops, err)
	}
	strict, err := sigsjson.UnmarshalStrict(patched, out)
	if err != nil {
		return fmt.Errorf("the patched workload does not decode: %w", err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("the patched workload does not decode: %w", errors.Join(strict...))
	}
	return nil
}

// operation returns the RFC 6902 operation of p, with the pool's name in its value.
func operation(p v1beta1.Patch, poolName string) (patchOperation, error) {
	op := patchOperation{Op: string(p.Operation), Path: p.Path}
	switch p.Operation {
	case v1beta1.PatchOperationAdd, v1beta1.PatchOperationReplace:
		if p.Value == nil || len(p.Value.Raw) == 0 {
			return op, fmt.Errorf("%s needs a value", p.Operation)
		}
		op.Value = json.RawMessage(strings.ReplaceAll(string(p.Value.Raw), openyurt.NodePoolNamePlaceholder, poolName))
	case v1beta1.PatchOperationRemove:
	default:
		return op, fmt.Errorf("unsupported operation %q: must be add, remove or replace", p.Operation)
	}
	if p.Path == "" || p.Path[0] != '/' {
		return op, fmt.Errorf("path %q is not a JSON pointer to a field: it must start with '/'", p.Path)
	}
	return op, nil
}

func apply(doc []byte, ops []patchOperation) ([]byte, error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	return patch.Apply(doc)
}

// locate applies ops one at a time to find the one that fails, and returns its error; err (of the whole
// document) when none fails alone.
func locate(doc []byte, tweaks []v1beta1.Tweaks, ops []patchOperation, err error) error {
	k := 0
	for i, t := range tweaks {
		for j := range t.Patches {
			next, opErr := apply(doc, ops[k:k+1])
			if opErr != nil {
				return &PatchError{Tweak: i, Patch: j, Err: opErr}
			}
			doc = next
			k++
		}
	}
	return err
}

func hasPatches(tweaks []v1beta1.Tweaks) bool {
	for _, t := range tweaks {
		if len(t.Patches) > 0 {
			return true
		}
	}
	return false
}

// identity is what identifies a workload to the controller: a patch may not change it.
type identity struct {
	typeMeta        metav1.TypeMeta
	name            string
	generateName    string
	namespace       string
	ownerReferences []metav1.OwnerReference
	status          any
	selector        *metav1.LabelSelector
	labels          map[string]string
	podLabels       map[string]string
}

func identityOf(t *metav1.TypeMeta, m *metav1.ObjectMeta, status any, selector *metav1.LabelSelector, podLabels map[string]string) identity {
	return identity{
		typeMeta: *t, name: m.Name, generateName: m.GenerateName, namespace: m.Namespace,
		ownerReferences: m.OwnerReferences, status: status, selector: selector,
		labels: identityLabels(m.Labels), podLabels: identityLabels(podLabels),
	}
}

// keepIdentityLabels puts back in after the IdentityLabels keys of before that the patches removed: a patch
// that replaces a whole labels map, as OpenYurt's own example YurtAppSet does ({"op": "add", "path":
// "/metadata/labels", "value": {"foo": "bar"}}), adds its labels to the workload's identity; a patch that sets
// one of them to another value is still refused (checkIdentity).
func keepIdentityLabels(before, after *map[string]string) {
	for _, key := range IdentityLabels {
		v, ok := (*before)[key]
		if _, kept := (*after)[key]; !ok || kept {
			continue
		}
		if *after == nil {
			*after = map[string]string{}
		}
		(*after)[key] = v
	}
}

// identityLabels returns the IdentityLabels keys of labels.
func identityLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for _, key := range IdentityLabels {
		if v, ok := labels[key]; ok {
			out[key] = v
		}
	}
	return out
}

// checkIdentity returns an error naming the first part of the identity that differs.
func checkIdentity(before, after identity) error {
	for _, part := range []struct {
		name          string
		before, after any
	}{
		{"apiVersion and kind", before.typeMeta, after.typeMeta},
		{"metadata.name", before.name, after.name},
		{"metadata.generateName", before.generateName, after.generateName},
		{"metadata.namespace", before.namespace, after.namespace},
		{"metadata.ownerReferences", before.ownerReferences, after.ownerReferences},
		{"status", before.status, after.status},
		{"spec.selector", before.selector, after.selector},
	} {
		if !apiequality.Semantic.DeepEqual(part.before, part.after) {
			return fmt.Errorf("%w: it changes %s", ErrIdentityChanged, part.name)
		}
	}
	for _, key := range IdentityLabels {
		if before.labels[key] != after.labels[key] {
			return fmt.Errorf("%w: it changes the label %s of metadata.labels", ErrIdentityChanged, key)
		}
		if before.podLabels[key] != after.podLabels[key] {
			return fmt.Errorf("%w: it changes the label %s of spec.template.metadata.labels", ErrIdentityChanged, key)
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
