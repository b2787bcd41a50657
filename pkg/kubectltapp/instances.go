package kubectltapp

import (
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"io"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// RevisionLabel is the label of a pod naming the ControllerRevision of the TApp it was built from (the
// label StatefulSets and DaemonSets use).
const RevisionLabel = tkestack.ControllerRevisionHashLabel

// none is the value of a cell that has nothing to show.
const none = "<none>"

// InstanceRow is one line of `kubectl tapp instances`.
type InstanceRow struct {
	// ID is the instance id.
	ID string
	// Pod is the name of the instance's pod, or <none>.
	Pod string
	// Template is the name of the template the instance runs ("default" or a templatePool key).
	Template string
	// Revision is the pod's controller-revision-hash label, or <none>.
	Revision string
	// Status is the instance's state as the controller reports it (Running, Pending, Killed, NotCreated...).
	Status string
	// Ready is ready containers/containers of the pod, or <none> without a pod.
	Ready string
	// Node is the node the pod is bound to, or <none>.
	Node string
	// Images are the images of the pod's containers (of the template when there is no pod), comma separated.
	Images string
	// Restarts is the sum of the restart counts of the pod's containers.
	Restarts string
	// Claims are the instance's claims of spec.volumeClaimTemplates, in template order, comma separated, as
	// <template>=<size>: the claim's capacity once bound; <capacity>→<request> while it is being resized
	// (its request above its capacity); Pending while unbound; <none> when the claim does not exist. Empty
	// (printed <none>) when the TApp has no claim templates or the claims were not listed.
	Claims string
	// Lifecycle is the pod's lifecycle state (label tkestack.io/lifecycle-state), followed, while a hook
	// of spec.lifecycle holds the pod, by the hook and what holds it, e.g.
	// PreparingDelete[preDelete:drain=true,finalizer=example.com/drain]; <none> for a pod without the label
	// (a TApp without lifecycle hooks) and an instance without a pod.
	Lifecycle string
}

// InstancePods returns the pods of pods that belong to tapp, keyed by instance id: controlled by the TApp
// (same UID) and named <tapp>-<id> after their instance label.
func InstancePods(tapp *tkestackv1.TApp, pods []*corev1.Pod) map[int]*corev1.Pod {
	owned := map[int]*corev1.Pod{}
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil || ref.UID != tapp.UID {
			continue
		}
		id := pod.Labels[tkestack.InstanceIDLabel]
		n, ok := tapppod.ParseID(id)
		if !ok || pod.Name != tapppod.Name(tapp.Name, id) {
			continue
		}
		owned[n] = pod
	}
	return owned
}

// InstanceRows returns one row per instance, in id order: every id 0..replicas-1 and every higher id whose
// pod still exists (it is being scaled away). Their Claims are empty (see InstanceRowsWithClaims).
func InstanceRows(tapp *tkestackv1.TApp, pods []*corev1.Pod) []InstanceRow {
	return InstanceRowsWithClaims(tapp, pods, nil)
}

// InstanceRowsWithClaims is InstanceRows with the instances' claims (InstanceRow.Claims) found in claims,
// the claims of the TApp's namespace; nil claims leave the column empty.
func InstanceRowsWithClaims(tapp *tkestackv1.TApp, pods []*corev1.Pod, claims []*corev1.PersistentVolumeClaim) []InstanceRow {
	owned := InstancePods(tapp, pods)
	ids := make([]int, 0, int(tapp.Spec.Replicas)+len(owned))
	for n := 0; n < int(tapp.Spec.Replicas); n++ {
		ids = append(ids, n)
	}
	for n := range owned {
		if n >= int(tapp.Spec.Replicas) {
			ids = append(ids, n)
		}
	}
	sort.Ints(ids)
	rows := make([]InstanceRow, 0, len(ids))
	byName := make(map[string]*corev1.PersistentVolumeClaim, len(claims))
	for _, c := range claims {
		byName[c.Name] = c
	}
	for _, n := range ids {
		row := instanceRow(tapp, strconv.Itoa(n), owned[n])
		if claims != nil {
			row.Claims = instanceClaims(tapp, row.ID, byName)
		}
		rows = append(rows, row)
	}
	return rows
}

// instanceClaims renders the claims of instance id (InstanceRow.Claims).
func instanceClaims(tapp *tkestackv1.TApp, id string, claims map[string]*corev1.PersistentVolumeClaim) string {
	parts := make([]string, 0, len(tapp.Spec.VolumeClaimTemplates))
	for _, t := range tapp.Spec.VolumeClaimTemplates {
		c, ok := claims[tapppod.ClaimName(t.Name, tapp.Name, id)]
		size := none
		switch {
		case !ok:
		case c.Status.Phase != corev1.ClaimBound:
			size = string(corev1.ClaimPending)
			if c.Status.Phase != "" {
				size = string(c.Status.Phase)
			}
		default:
			capacity := c.Status.Capacity[corev1.ResourceStorage]
			request := c.Spec.Resources.Requests[corev1.ResourceStorage]
			size = capacity.String()
			if capacity.Cmp(request) < 0 {
				size += "→" + request.String()
			}
		}
		parts = append(parts, t.Name+"="+size)
	}
	return strings.Join(parts, ",")
}

func instanceRow(tapp *tkestackv1.TApp, id string, pod *corev1.Pod) InstanceRow {
	row := InstanceRow{ID: id, Pod: none, Template: policy.TemplateNameFor(tapp, id), Revision: none,
		Ready: none, Node: none, Restarts: none, Lifecycle: none}
	if pod == nil {
		row.Status = string(policy.StatusNotCreated)
		if policy.IsKilled(tapp, id) {
			row.Status = string(policy.StatusKilled)
		}
		row.Images = none
		if t, err := policy.TemplateFor(tapp, row.Template); err == nil {
			row.Images = containerImages(t.Spec.Containers)
		}
		return row
	}
	row.Pod = pod.Name
	if r := pod.Labels[RevisionLabel]; r != "" {
		row.Revision = r
	}
	row.Status = string(policy.PodStatus(tapp, pod))
	ready, restarts := 0, int32(0)
	for _, s := range pod.Status.ContainerStatuses {
		if s.Ready {
			ready++
		}
		restarts += s.RestartCount
	}
	row.Ready = fmt.Sprintf("%d/%d", ready, len(pod.Spec.Containers))
	row.Restarts = strconv.Itoa(int(restarts))
	if pod.Spec.NodeName != "" {
		row.Node = pod.Spec.NodeName
	}
	row.Images = containerImages(pod.Spec.Containers)
	row.Lifecycle = lifecycleCell(tapp, pod)
	return row
}

// lifecycleCell is the LIFECYCLE cell of a pod (InstanceRow.Lifecycle), without spaces.
func lifecycleCell(tapp *tkestackv1.TApp, pod *corev1.Pod) string {
	if _, ok := pod.Labels[tkestack.LifecycleStateLabel]; !ok {
		return none
	}
	state, hook, heldBy := policy.LifecycleState(tapp, pod)
	if len(heldBy) == 0 {
		return state
	}
	holds := make([]string, 0, len(heldBy))
	for _, h := range heldBy {
		holds = append(holds, strings.Replace(strings.TrimPrefix(h, "label "), "finalizer ", "finalizer=", 1))
	}
	return state + "[" + hook + ":" + strings.Join(holds, ",") + "]"
}

func containerImages(containers []corev1.Container) string {
	images := make([]string, 0, len(containers))
	for _, c := range containers {
		images = append(images, c.Image)
	}
	if len(images) == 0 {
		return none
	}
	return strings.Join(images, ",")
}

// PrintInstanceRows writes rows as an aligned table with a header, as kubectl get does.
func PrintInstanceRows(out io.Writer, rows []InstanceRow) error {
	w := printers.GetNewTabWriter(out)
	fmt.Fprintln(w, "ID\tPOD\tTEMPLATE\tREVISION\tSTATUS\tREADY\tNODE\tIMAGES\tRESTARTS\tCLAIMS\tLIFECYCLE")
	for _, r := range rows {
		claims := r.Claims
		if claims == "" {
			claims = none
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.ID, r.Pod, r.Template, r.Revision, r.Status, r.Ready, r.Node, r.Images, r.Restarts, claims, r.Lifecycle)
	}
	return w.Flush()
}
