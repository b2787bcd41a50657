package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTemplateResolution(t *testing.T) {
	tapp := newTApp(3)
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{
		"canary": podTemplate("nginx:2", corev1.RestartPolicyAlways),
		"pool":   podTemplate("nginx:3", corev1.RestartPolicyAlways),
	}
	tapp.Spec.Templates = map[string]string{"1": "canary", "2": "missing"}

	cases := []struct {
		name        string
		defaultName string
		id          string
		want        string
		image       string
		wantErr     bool
	}{
		{"unlisted id uses default", "default", "0", "default", "nginx:1", false},
		{"listed id uses its template", "default", "1", "canary", "nginx:2", false},
		{"missing template is an error", "default", "2", "missing", "", true},
		{"defaultTemplateName names a pool entry", "pool", "0", "pool", "nginx:3", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp := tapp.DeepCopy()
			tapp.Spec.DefaultTemplateName = tc.defaultName
			if got := TemplateNameFor(tapp, tc.id); got != tc.want {
				t.Fatalf("TemplateNameFor = %q, want %q", got, tc.want)
			}
			tmpl, err := TemplateFor(tapp, tc.want)
			if (err != nil) != tc.wantErr {
				t.Fatalf("TemplateFor error = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && tmpl.Spec.Containers[0].Image != tc.image {
				t.Fatalf("image = %q, want %q", tmpl.Spec.Containers[0].Image, tc.image)
			}
		})
	}

	// The result is a copy.
	tmpl, _ := TemplateFor(tapp, "default")
	tmpl.Spec.Containers[0].Image = "changed"
	if tapp.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatal("TemplateFor returned the TApp's own template")
	}

	// An empty updateStrategy.template (or defaultTemplateName) is never met: the API defaults both
	// (pkg/apis/tkestack/v1 TestDefault*), and the controller refuses undefaulted TApps (Undefaulted).
	tapp.Spec.UpdateStrategy.Template = "canary"
	if got := RollingTemplateName(tapp); got != "canary" {
		t.Fatalf("RollingTemplateName = %q, want canary", got)
	}
}

// TestInstanceIDName reproduces the original's identity test.
func TestInstanceIDName(t *testing.T) {
	tapp := newTApp(5)
	for _, id := range []string{"0", "3", "4"} {
		pod, err := NewPod(tapp, id)
		if err != nil {
			t.Fatal(err)
		}
		if pod.Name != "app-"+id || pod.Namespace != "ns" || pod.Labels[tkestack.InstanceIDLabel] != id {
			t.Fatalf("pod %s/%s labels %v", pod.Namespace, pod.Name, pod.Labels)
		}
	}
}

func TestNewPod(t *testing.T) {
	tapp := newTApp(3)
	tapp.Spec.ServiceName = "svc"
	tapp.Spec.Template.Annotations = map[string]string{"note": "x"}
	tapp.Spec.Template.Finalizers = []string{"example.com/keep"}
	tapp.Spec.Template.Spec.Volumes = []corev1.Volume{
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "data"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "logs"}},
	}

	pod, err := NewPod(tapp, "2")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != "app-2" || pod.Namespace != "ns" {
		t.Fatalf("name %s/%s", pod.Namespace, pod.Name)
	}
	wantLabels := map[string]string{
		"app":                      "web",
		tkestack.InstanceIDLabel:   "2",
		tkestack.TemplateHashLabel: tapppod.TemplateHash(&tapp.Spec.Template),
		tkestack.UniqHashLabel:     tapppod.UniqHash(&tapp.Spec.Template),
		tapppod.ResizeHashLabel:    tapppod.ResizeHash(&tapp.Spec.Template),
	}
	if !reflect.DeepEqual(pod.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", pod.Labels, wantLabels)
	}
	wantAnn := map[string]string{"note": "x", tapppod.TemplateKeysAnnotation: `{"labels":["app"],"annotations":["note"]}`}
	if !reflect.DeepEqual(pod.Annotations, wantAnn) {
		t.Errorf("annotations = %v, want %v", pod.Annotations, wantAnn)
	}
	if !reflect.DeepEqual(pod.Finalizers, []string{"example.com/keep"}) {
		t.Errorf("finalizers = %v", pod.Finalizers)
	}
	yes := true
	wantRef := []metav1.OwnerReference{{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "app", UID: "tapp-uid", Controller: &yes, BlockOwnerDeletion: &yes}}
	if !reflect.DeepEqual(pod.OwnerReferences, wantRef) {
		t.Errorf("ownerReferences = %+v", pod.OwnerReferences)
	}
	if !IsControlledBy(pod, tapp) {
		t.Error("pod is not controlled by the TApp")
	}
	if !reflect.DeepEqual(pod.Spec.ReadinessGates, []corev1.PodReadinessGate{{ConditionType: "tkestack.io/InPlaceUpdate"}}) {
		t.Errorf("readinessGates = %v", pod.Spec.ReadinessGates)
	}
	if pod.Spec.Hostname != "app-2" || pod.Spec.Subdomain != "svc" {
		t.Errorf("hostname/subdomain = %q/%q", pod.Spec.Hostname, pod.Spec.Subdomain)
	}
	var vols []string
	for _, v := range pod.Spec.Volumes {
		s := v.Name + ":"
		if v.PersistentVolumeClaim != nil {
			s += "pvc=" + v.PersistentVolumeClaim.ClaimName
		} else {
			s += "emptyDir"
		}
		vols = append(vols, s)
	}
	wantVols := []string{"cache:emptyDir", "data:pvc=data-app-2", "logs:pvc=logs-app-2"}
	if !reflect.DeepEqual(vols, wantVols) {
		t.Errorf("volumes = %v, want %v", vols, wantVols)
	}
	// The TApp is not modified.
	if tapp.Spec.Template.Spec.Volumes[1].EmptyDir == nil || len(tapp.Spec.Template.Spec.ReadinessGates) != 0 {
		t.Error("NewPod modified the TApp's template")
	}

	// An existing gate is not duplicated; no serviceName → no hostname.
	tapp.Spec.ServiceName = ""
	tapp.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: InPlaceUpdateGate}}
	pod, _ = NewPod(tapp, "0")
	if len(pod.Spec.ReadinessGates) != 1 || pod.Spec.Hostname != "" || pod.Spec.Subdomain != "" {
		t.Errorf("gates %v hostname %q subdomain %q", pod.Spec.ReadinessGates, pod.Spec.Hostname, pod.Spec.Subdomain)
	}

	// Pool template per id.
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"x": podTemplate("nginx:9", corev1.RestartPolicyAlways)}
	tapp.Spec.Templates = map[string]string{"1": "x", "2": "nope"}
	pod, _ = NewPod(tapp, "1")
	if pod.Spec.Containers[0].Image != "nginx:9" {
		t.Errorf("pod 1 image = %q", pod.Spec.Containers[0].Image)
	}
	if _, err := NewPod(tapp, "2"); err == nil {
		t.Error("NewPod with a missing template succeeded")
	}
}

func TestNewPVCs(t *testing.T) {
	tapp := newTApp(2)
	tapp.Spec.Selector.MatchLabels["tier"] = "db"
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "www", Labels: map[string]string{"disk": "ssd"}, Annotations: map[string]string{"a": "b"}, ResourceVersion: "7"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}
	pvcs := NewPVCs(tapp, "1")
	if len(pvcs) != 1 {
		t.Fatalf("got %d claims", len(pvcs))
	}
	c := pvcs[0]
	if c.Name != "www-app-1" || c.Namespace != "ns" || c.ResourceVersion != "" {
		t.Errorf("claim %s/%s rv %q", c.Namespace, c.Name, c.ResourceVersion)
	}
	wantLabels := map[string]string{"disk": "ssd", "app": "web", "tier": "db", tkestack.InstanceIDLabel: "1"}
	if !reflect.DeepEqual(c.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", c.Labels, wantLabels)
	}
	if len(c.OwnerReferences) != 0 {
		t.Errorf("claims must not be owned (never deleted): %v", c.OwnerReferences)
	}
	if c.Spec.Resources.Requests.Storage().String() != "1Gi" || c.Annotations["a"] != "b" {
		t.Errorf("spec/annotations not copied: %+v", c)
	}
	c.Labels["x"] = "y"
	if _, ok := tapp.Spec.VolumeClaimTemplates[0].Labels["x"]; ok {
		t.Error("NewPVCs shares maps with the TApp")
	}
}

func TestParseID(t *testing.T) {
	for id, want := range map[string]bool{"0": true, "12": true, "01": false, "-1": false, "+1": false, "a": false, "": false} {
		if _, ok := ParseID(id); ok != want {
			t.Errorf("ParseID(%q) ok = %v, want %v", id, ok, want)
		}
	}
}

// TestPlanNewPod: the pods of a plan's Creates, built from the templates the plan hashed, are those NewPod
// builds, for instances of the default template and of a pool template; a missing template is an error, as
// is a plan ComputePlan did not compute.
func TestPlanNewPod(t *testing.T) {
	tapp := newTApp(3)
	pool := *tapp.Spec.Template.DeepCopy()
	pool.Spec.Containers[0].Image = "pool:1"
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"pool": pool}
	tapp.Spec.Templates = map[string]string{"1": "pool", "2": "missing"}
	plan := ComputePlan(tapp, nil, nil, time.Now())
	for _, id := range []string{"0", "1"} {
		got, err := plan.NewPod(id)
		if err != nil {
			t.Fatalf("instance %s: %v", id, err)
		}
		want, err := NewPod(tapp, id)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("instance %s: Plan.NewPod = %+v, want NewPod's %+v", id, got, want)
		}
	}
	if _, err := plan.NewPod("2"); err == nil {
		t.Error("Plan.NewPod of an instance whose template is missing: no error")
	}
	if _, err := (&Plan{}).NewPod("0"); err == nil {
		t.Error("Plan.NewPod of a plan ComputePlan did not compute: no error")
	}
}
