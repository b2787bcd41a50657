//go:build e2e

package e2e

import (
	"context"
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// TestTAppAdoptsPodsOfTheOriginalController: pods and claims left by the original tkestack/tapp controller
// (decimal fnv hash labels, the readiness gate, generateName, claims without instance label), orphaned as a
// migration leaves them, are adopted by a TApp created on tapp-apiserver with the same spec: same UIDs, no
// restart, the pods relabelled with this controller's hashes; a pod controlled by another object stays a
// conflict and is never touched.
func TestTAppAdoptsPodsOfTheOriginalController(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-adopt")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The template as the original controller left it in its CRD object: its hashes among the labels.
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tapp_template_hash_key": "8571628173525391740",
			"tapp_uniq_hash_key": "1740216837251739174"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9",
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}}},
	}
	claimTemplate := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	// The controller of pod 2 (it must exist, or the garbage collector deletes the pod).
	holder, err := kubeClient.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "holder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]types.UID{}
	for id := 0; id < 3; id++ {
		sid := fmt.Sprint(id)
		claim := claimTemplate.DeepCopy()
		claim.Name, claim.Namespace, claim.Labels = "data-web-"+sid, ns, map[string]string{"app": "web"}
		// A pre-bound PersistentVolume lets the claim bind (to it rather than to a provisioned one).
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim.Name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim.Name},
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/tapp-e2e/" + ns + "/" + claim.Name}},
			},
		}
		if _, err := kubeClient.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = kubeClient.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
		})
		c, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before["claim/"+c.Name] = c.UID
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + sid, GenerateName: "web-", Namespace: ns, Labels: map[string]string{"tapp_instance_key": sid}},
			Spec: *template.Spec.DeepCopy()}
		for k, v := range template.Labels {
			pod.Labels[k] = v
		}
		pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}}
		pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: policy.InPlaceUpdateGate}}
		if id == 2 {
			// Still controlled by someone else: a conflict, never adopted.
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "holder", UID: holder.UID, Controller: ptr.To(true)}}
		}
		p, err := kubeClient.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before["pod/"+p.Name] = p.UID
	}
	// The original controller had set its gate condition True.
	pollUntil(t, ctrlTimeout, "the original pods run", func() error {
		for id := 0; id < 3; id++ {
			pod := getPod(t, ns, podName("web", id))
			if pod.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s is %s", pod.Name, pod.Status.Phase)
			}
		}
		return nil
	})
	restarts := map[string]int32{}
	for id := 0; id < 3; id++ {
		pod := getPod(t, ns, podName("web", id))
		for _, cs := range pod.Status.ContainerStatuses {
			restarts[pod.Name] += cs.RestartCount
		}
	}

	tapp := &tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: tkestackv1.TAppSpec{Replicas: 3, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template, VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claimTemplate}}}
	tapp, err = tappClient.TKEStackAppsV1().TApps(ns).Create(ctx, tapp, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ours := regexp.MustCompile(`^[0-9a-f]{10}$`)
	pollUntil(t, ctrlTimeout, "instances 0 and 1 adopted and relabelled, instance 2 a conflict", func() error {
		for id := 0; id < 2; id++ {
			pod := getPod(t, ns, podName("web", id))
			if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != tapp.UID {
				return fmt.Errorf("pod %s controlled by %v", pod.Name, ref)
			}
			if !ours.MatchString(pod.Labels[tkestack.TemplateHashLabel]) || !ours.MatchString(pod.Labels[tkestack.UniqHashLabel]) {
				return fmt.Errorf("pod %s labels %v", pod.Name, pod.Labels)
			}
			if !podReady(pod) {
				return fmt.Errorf("pod %s is not Ready", pod.Name)
			}
			claim, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-web-"+fmt.Sprint(id), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if ref := metav1.GetControllerOf(claim); ref == nil || ref.UID != tapp.UID {
				return fmt.Errorf("claim %s controlled by %v", claim.Name, ref)
			}
		}
		got := getTApp(t, ns, "web")
		if got.Status.ReadyReplicas != 2 || got.Status.Statuses["0"] != "Running" || got.Status.Statuses["1"] != "Running" {
			return fmt.Errorf("status: %s", describeStatus(got))
		}
		return nil
	})
	for id := 0; id < 3; id++ {
		pod := getPod(t, ns, podName("web", id))
		var n int32
		for _, cs := range pod.Status.ContainerStatuses {
			n += cs.RestartCount
		}
		if pod.UID != before["pod/"+pod.Name] || n != restarts[pod.Name] {
			t.Errorf("pod %s: uid %s (was %s), %d restarts (was %d)", pod.Name, pod.UID, before["pod/"+pod.Name], n, restarts[pod.Name])
		}
		claim, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-web-"+fmt.Sprint(id), metav1.GetOptions{})
		if err != nil || claim.UID != before["claim/"+claim.Name] {
			t.Errorf("claim data-web-%d: %v, uid changed", id, err)
		}
	}
	conflict := getPod(t, ns, "web-2")
	if ref := metav1.GetControllerOf(conflict); ref == nil || ref.Kind != "ConfigMap" || conflict.Labels[tkestack.TemplateHashLabel] != "8571628173525391740" {
		t.Errorf("the pod of another controller was touched: %+v", conflict.ObjectMeta)
	}
	events, err := kubeClient.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,involvedObject.kind=TApp"})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int{}
	for _, e := range events.Items {
		reasons[e.Reason] += int(max(e.Count, 1))
	}
	if reasons["Adopted"] < 4 || reasons["Relabelled"] < 2 || reasons["InstanceConflict"] < 1 {
		t.Errorf("events by reason %v, want Adopted (2 pods, 2 claims), Relabelled (2 pods) and InstanceConflict", reasons)
	}
	if reasons["Recreating"]+reasons["InPlaceUpdate"] != 0 {
		t.Errorf("adopted pods were updated: events by reason %v", reasons)
	}
}
