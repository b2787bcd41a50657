package policy

import (
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"reflect"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ourHash is the form of the hashes this controller writes (stablehash: 10 lowercase hex characters). The
// original tkestack/tapp controller writes decimal fnv64 values (up to 20 digits), which never have it.
var ourHash = regexp.MustCompile(`^[0-9a-f]{10}$`)

// ForeignHashes reports whether the pod's hash labels were not written by this controller: either label is
// missing or is not of the form this controller writes. Such a pod (created by the original controller, or
// adopted from someone else) is judged by its content (CompareToTemplate), not by its hashes.
func ForeignHashes(pod *corev1.Pod) bool {
	return !ourHash.MatchString(pod.Labels[tkestack.TemplateHashLabel]) || !ourHash.MatchString(pod.Labels[tkestack.UniqHashLabel])
}

// Match is how a pod's spec relates to the spec its instance's template gives.
type Match string

// Matches.
const (
	// RunsTemplate: the pod runs the template; relabelling it is enough.
	RunsTemplate Match = "RunsTemplate"
	// ImagesDiffer: the pod runs the template except for the images of regular containers: in-place update.
	ImagesDiffer Match = "ImagesDiffer"
	// Differs: anything else: the pod is recreated.
	Differs Match = "Differs"
)

// CompareToTemplate compares a pod's spec (have) with the spec want its instance's template gives (the
// spec of NewPod). It decides from content only, never from labels, and is how pods with foreign hashes are
// judged. The pod runs its template when every field the template sets has the same value on the pod:
//   - a field the template leaves empty (zero, nil, empty list or map) is not compared: the API server's
//     defaults (imagePullPolicy, terminationMessagePath, dnsPolicy, schedulerName, probe timings, port
//     protocols, ...), admission (service account token volume and mounts, tolerations, priority, runtime
//     class overhead, injected env) and the scheduler (nodeName) only fill fields the template left empty;
//   - maps (labels of selectors, nodeSelector, resource lists) need the template's keys with equal values;
//     quantities compare by value ("0.5" equals "500m"); extra keys on the pod are ignored;
//   - lists of named items (containers, init containers, volumes, volume mounts by name and mount path,
//     env, image pull secrets, ports when all named) are matched by name, in any order; other lists of
//     objects (tolerations, host aliases, unnamed ports, ...) need each template item, with the same rule,
//     in a distinct pod item; extra items on the pod are ignored; lists of scalars (command, args, ...)
//     must be equal;
//   - the tkestack.io/InPlaceUpdate readiness gate is not compared: a pod without it is updated in place
//     without the traffic drain;
//   - want is the pod built without the default spread constraints (PodOwner, SpreadFor): a pod created
//     before them runs its template;
//   - the image of a regular container (matched by name) may differ: the result is then ImagesDiffer.
//     Init container images are compared like any field.
//
// It returns a reason naming the first differing field when the result is Differs.
func CompareToTemplate(want, have *corev1.PodSpec) (Match, string) {
	w, h := want.DeepCopy(), have.DeepCopy()
	gates := w.ReadinessGates[:0]
	for _, g := range w.ReadinessGates {
		if g.ConditionType != InPlaceUpdateGate {
			gates = append(gates, g)
		}
	}
	w.ReadinessGates = gates
	imagesDiffer := false
	for i := range w.Containers {
		c := findContainer(h.Containers, w.Containers[i].Name)
		if c == nil {
			return Differs, fmt.Sprintf("spec.containers[%s] is missing", w.Containers[i].Name)
		}
		if c.Image != w.Containers[i].Image {
			imagesDiffer = true
			c.Image = w.Containers[i].Image
		}
	}
	if path := contentDiff(reflect.ValueOf(*w), reflect.ValueOf(*h), "spec"); path != "" {
		return Differs, path + " differs"
	}
	if imagesDiffer {
		return ImagesDiffer, ""
	}
	return RunsTemplate, ""
}

func findContainer(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

// leafTypes compare by semantic equality as a whole.
var leafTypes = map[reflect.Type]bool{
	reflect.TypeOf(resource.Quantity{}):  true,
	reflect.TypeOf(intstr.IntOrString{}): true,
	reflect.TypeOf(metav1.Time{}):        true,
	reflect.TypeOf(metav1.MicroTime{}):   true,
	reflect.TypeOf(metav1.Duration{}):    true,
}

// contentDiff returns the path of the first value of want that have does not carry (see CompareToTemplate),
// or "". want is a value the template sets; zero struct fields of want are skipped by the struct case.
func contentDiff(want, have reflect.Value, path string) string {
	if leafTypes[want.Type()] {
		if !equality.Semantic.DeepEqual(want.Interface(), have.Interface()) {
			return path
		}
		return ""
	}
	switch want.Kind() {
	case reflect.Pointer:
		if want.IsNil() {
			return ""
		}
		if have.IsNil() {
			return path
		}
		return contentDiff(want.Elem(), have.Elem(), path)
	case reflect.Struct:
		t := want.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || want.Field(i).IsZero() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			p := path + "." + name
			switch {
			case f.Anonymous:
				p = path // inlined, like ProbeHandler in Probe
			case name == "" || name == "-":
				p = path + "." + f.Name
			}
			if d := contentDiff(want.Field(i), have.Field(i), p); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		keys := want.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			p := fmt.Sprintf("%s[%v]", path, k)
			hv := have.MapIndex(k)
			if !hv.IsValid() {
				return p
			}
			if d := contentDiff(want.MapIndex(k), hv, p); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		return sliceDiff(want, have, path)
	default:
		if !equality.Semantic.DeepEqual(want.Interface(), have.Interface()) {
			return path
		}
		return ""
	}
}

// sliceDiff compares the lists of CompareToTemplate.
func sliceDiff(want, have reflect.Value, path string) string {
	if want.Len() == 0 {
		return ""
	}
	elem := want.Type().Elem()
	if elem.Kind() != reflect.Struct || leafTypes[elem] {
		if !equality.Semantic.DeepEqual(want.Interface(), have.Interface()) {
			return path
		}
		return ""
	}
	if keyed(want) {
		index := map[string]reflect.Value{}
		for i := 0; i < have.Len(); i++ {
			if k := itemKey(have.Index(i)); k != "" {
				index[k] = have.Index(i)
			}
		}
		for i := 0; i < want.Len(); i++ {
			k := itemKey(want.Index(i))
			p := fmt.Sprintf("%s[%s]", path, strings.ReplaceAll(k, "\x00", " at "))
			hv, ok := index[k]
			if !ok {
				return p + " (missing)"
			}
			if d := contentDiff(want.Index(i), hv, p); d != "" {
				return d
			}
		}
		return ""
	}
	used := make([]bool, have.Len())
	for i := 0; i < want.Len(); i++ {
		found := false
		for j := 0; j < have.Len() && !found; j++ {
			if !used[j] && contentDiff(want.Index(i), have.Index(j), "") == "" {
				used[j], found = true, true
			}
		}
		if !found {
			return fmt.Sprintf("%s[%d]", path, i)
		}
	}
	return ""
}

// keyed reports whether every item of a list of structs has a non-empty Name field.
func keyed(list reflect.Value) bool {
	for i := 0; i < list.Len(); i++ {
		if itemKey(list.Index(i)) == "" {
			return false
		}
	}
	return true
}

// itemKey is the Name of a list item, plus its MountPath for volume mounts (one volume may be mounted at
// several paths), or "" if it has none.
func itemKey(v reflect.Value) string {
	name := v.FieldByName("Name")
	if !name.IsValid() || name.Kind() != reflect.String || name.String() == "" {
		return ""
	}
	if mp := v.FieldByName("MountPath"); mp.IsValid() && mp.Kind() == reflect.String {
		return name.String() + "\x00" + mp.String()
	}
	return name.String()
}
