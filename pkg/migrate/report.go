package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	tappcontroller "github.com/tapp-io/tapp-apiserver/pkg/controller/tapp"
)

// outcome is what became of one object's dependents on tapp-apiserver.
type outcome struct {
	// adopted are controlled by the new object with their UID unchanged; relabelled are those of them whose
	// hash labels the controller replaced without a restart, restarted those whose containers restarted.
	adopted, relabelled, restarted int
	// replaced have a new UID (recreated), gone no longer exist, pending have no controller yet.
	replaced, gone, pending []string
	// conflicts are controlled by another object.
	conflicts []string
	// waiting says why the object is not done yet, when it is not.
	waiting string
	// nodes are the nodes of a NodePool.
	nodes []string
}

func (o *outcome) done() bool { return len(o.pending) == 0 && o.waiting == "" }

// awaitAdoption waits until every restored object has adopted what the original owned (and a TApp reports
// its instances), then prints one line per object.
func (m *Migrator) awaitAdoption(ctx context.Context, s *state) error {
	var entries []*Entry
	for _, e := range s.backup.Entries {
		if _, ok := s.registered[e.kind().Group]; ok {
			entries = append(entries, e)
		}
	}
	outcomes := make([]*outcome, len(entries))
	err := m.waitUntil(ctx, func(ctx context.Context) (bool, error) {
		all := true
		for i, e := range entries {
			if outcomes[i] != nil && outcomes[i].done() {
				continue
			}
			version := e.Object.GroupVersionKind().Version
			if obj, err := restoreForm(e, s.registered); err == nil {
				version = obj.GroupVersionKind().Version
			}
			o, err := m.observeOutcome(ctx, e, version)
			switch {
			case err != nil && deadlineError(ctx, err):
				// The wait is over: keep what was last seen.
				return false, nil
			case err != nil:
				o = &outcome{waiting: err.Error()}
			}
			outcomes[i] = o
			all = all && o.done()
		}
		return all, nil
	})
	var stuck []string
	for i, e := range entries {
		o := outcomes[i]
		if o == nil {
			o = &outcome{waiting: "not observed"}
		}
		m.printf("%s", reportLine(e, o))
		if !o.done() {
			stuck = append(stuck, e.key())
		}
	}
	if err != nil {
		return fmt.Errorf("%s did not adopt everything within %s; see the lines above and the objects' events "+
			"(kubectl describe), then run migrate again to wait and report again", strings.Join(stuck, ", "), m.Timeout)
	}
	return nil
}

// observeOutcome compares the dependents recorded in the backup with what the cluster holds now.
func (m *Migrator) observeOutcome(ctx context.Context, e *Entry, version string) (*outcome, error) {
	k := e.kind()
	cur, err := m.resource(k, version, e.Object.GetNamespace()).Get(ctx, e.Object.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading it: %w", err)
	}
	o := &outcome{}
	uid := cur.GetUID()
	ids := map[string]bool{}
	for _, d := range e.Dependents {
		meta, pod, err := m.dependentNow(ctx, e.Object.GetNamespace(), d)
		switch {
		case apierrors.IsNotFound(err):
			o.gone = append(o.gone, d.Name)
			continue
		case err != nil:
			return nil, err
		case meta.UID != d.UID:
			o.replaced = append(o.replaced, d.Name)
			continue
		}
		ref := metav1.GetControllerOfNoCopy(meta)
		switch {
		case ref == nil:
			o.pending = append(o.pending, d.Kind+" "+d.Name)
			continue
		case ref.UID != uid:
			o.conflicts = append(o.conflicts, fmt.Sprintf("%s %s (controlled by %s %s)", d.Kind, d.Name, ref.Kind, ref.Name))
			continue
		}
		o.adopted++
		if pod != nil {
			if restarts(pod) != d.Restarts {
				o.restarted++
			} else if pod.Labels[tkestack.TemplateHashLabel] != d.Labels[tkestack.TemplateHashLabel] || pod.Labels[tkestack.UniqHashLabel] != d.Labels[tkestack.UniqHashLabel] {
				o.relabelled++
			}
			ids[pod.Labels[tkestack.InstanceIDLabel]] = true
		}
	}
	if k.Kind == "TApp" {
		o.waiting = tappWaiting(cur, ids)
		if o.waiting == "" {
			o.conflicts = append(o.conflicts, tappConflicts(cur)...)
		}
	}
	if k.Kind == "NodePool" {
		o.nodes, _, _ = unstructured.NestedStringSlice(cur.Object, "status", "nodes")
	}
	// NodePool has no observedGeneration: its status is a count of nodes, right at any time.
	if generation, observed := cur.GetGeneration(), observedGeneration(cur); k.Kind != "NodePool" && k.Kind != "TApp" && observed < generation {
		o.waiting = fmt.Sprintf("status.observedGeneration %d < generation %d", observed, generation)
	}
	return o, nil
}

func observedGeneration(u *unstructured.Unstructured) int64 {
	g, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return g
}

// tappWaiting says why a TApp does not report its instances yet, or "".
func tappWaiting(tapp *unstructured.Unstructured, ids map[string]bool) string {
	if observed := observedGeneration(tapp); observed < tapp.GetGeneration() {
		return fmt.Sprintf("status.observedGeneration %d < generation %d", observed, tapp.GetGeneration())
	}
	statuses, _, _ := unstructured.NestedStringMap(tapp.Object, "status", "statuses")
	var missing []string
	for id := range ids {
		if _, ok := statuses[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return "status.statuses lacks instance(s) " + strings.Join(missing, ", ")
	}
	return ""
}

// tappConflicts returns the messages of a TApp's ReplicaFailure condition about instances whose name is
// held by a pod controlled by someone else.
func tappConflicts(tapp *unstructured.Unstructured) []string {
	conditions, _, _ := unstructured.NestedSlice(tapp.Object, "status", "conditions")
	for _, c := range conditions {
		cond, _ := c.(map[string]interface{})
		if cond["type"] == tkestackv1.TAppReplicaFailure && cond["status"] == "True" && strings.Contains(fmt.Sprint(cond["reason"]), tappcontroller.ReasonInstanceConflict) {
			return []string{fmt.Sprint(cond["message"])}
		}
	}
	return nil
}

func (m *Migrator) dependentNow(ctx context.Context, ns string, d Dependent) (*metav1.ObjectMeta, *corev1.Pod, error) {
	if d.Kind == "Pod" {
		pod, err := m.Kube.CoreV1().Pods(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return nil, nil, err
		}
		return &pod.ObjectMeta, pod, nil
	}
	meta, err := m.dependentMeta(ctx, ns, d)
	return meta, nil, err
}

// reportLine is the line printed for one object, for example
// "TApp default/web: 3/3 pods and claims adopted with their UIDs (3 relabelled, 0 left for update), 0 replaced, 0 conflicts".
func reportLine(e *Entry, o *outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.key())
	switch e.kind().Kind {
	case "NodePool":
		fmt.Fprintf(&b, "served by tapp-apiserver with %s (%s)", plural(len(o.nodes), "node"), strings.Join(o.nodes, ", "))
	default:
		fmt.Fprintf(&b, "%d/%d %s adopted with their UIDs", o.adopted, len(e.Dependents), dependentWords(e))
		if e.kind().Kind == "TApp" {
			pods := 0
			for _, d := range e.Dependents {
				if d.Kind == "Pod" {
					pods++
				}
			}
			adoptedPods := pods - len(filterPods(e, o.replaced)) - len(filterPods(e, o.gone)) - countPods(o.pending) - countPods(o.conflicts)
			fmt.Fprintf(&b, " (pods: %d relabelled, %d updated in place, %d left for update)", o.relabelled, o.restarted,
				max(0, adoptedPods-o.relabelled-o.restarted))
		}
	}
	fmt.Fprintf(&b, ", %d replaced, %d gone, %d conflicts", len(o.replaced), len(o.gone), len(o.conflicts))
	if len(o.conflicts) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(o.conflicts, "; "))
	}
	if len(o.pending) > 0 {
		fmt.Fprintf(&b, "; not adopted yet: %s", strings.Join(o.pending, ", "))
	}
	if o.waiting != "" {
		fmt.Fprintf(&b, "; waiting: %s", o.waiting)
	}
	return b.String()
}

func dependentWords(e *Entry) string {
	if e.kind().Kind == "TApp" {
		return "pods and claims"
	}
	return "workloads"
}

func filterPods(e *Entry, names []string) []string {
	var out []string
	for _, d := range e.Dependents {
		if d.Kind == "Pod" && slices.Contains(names, d.Name) {
			out = append(out, d.Name)
		}
	}
	return out
}

func countPods(items []string) int {
	n := 0
	for _, item := range items {
		if strings.HasPrefix(item, "Pod ") {
			n++
		}
	}
	return n
}
