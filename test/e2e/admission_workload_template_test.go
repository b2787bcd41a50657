//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestWorkloadTemplateCoreChecks checks, in cluster mode, that a pod template the core API refuses is
// refused with a 422 whose cause names the field on the object that holds it: a TApp's spec.template, a
// YurtAppDaemon's deploymentTemplate and its statefulSetTemplate (checked by dry-run pod, Deployment and
// StatefulSet creates). Nothing is stored.
func TestWorkloadTemplateCoreChecks(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "template-core")
	// Until the namespace's default ServiceAccount exists, the core API refuses every pod for its absence
	// before validating it, and the check lets such a template through.
	waitDefaultServiceAccount(t, ns)
	defects := []struct {
		name string
		// field is the field path of the defect inside the pod template (the causes may go deeper).
		field  string
		mutate func(*corev1.PodTemplateSpec)
	}{
		{"image with spaces", "spec.containers[0].image", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Image = "nginx with spaces"
		}},
		{"resource name with a space", "spec.containers[0].resources", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"bad name": resource.MustParse("1")}
		}},
		{"env name 1BAD=", "spec.containers[0].env[0].name", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "1BAD=", Value: "x"}}
		}},
		{"imagePullPolicy Bogus", "spec.containers[0].imagePullPolicy", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].ImagePullPolicy = "Bogus"
		}},
		{"dnsPolicy Bogus", "spec.dnsPolicy", func(p *corev1.PodTemplateSpec) {
			p.Spec.DNSPolicy = "Bogus"
		}},
		{"terminationGracePeriodSeconds -5", "spec.terminationGracePeriodSeconds", func(p *corev1.PodTemplateSpec) {
			p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-5)
		}},
		{"toleration operator Bogus", "spec.tolerations[0].operator", func(p *corev1.PodTemplateSpec) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Bogus", Effect: corev1.TaintEffectNoSchedule}}
		}},
		{"nodeSelector key bad key!", "spec.nodeSelector", func(p *corev1.PodTemplateSpec) {
			p.Spec.NodeSelector = map[string]string{"bad key!": "x"}
		}},
		{"runAsUser -1", "spec.securityContext.runAsUser", func(p *corev1.PodTemplateSpec) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](-1)}
		}},
		{"volume with no source", "spec.volumes[0]", func(p *corev1.PodTemplateSpec) {
			p.Spec.Volumes = []corev1.Volume{{Name: "empty"}}
		}},
		{"probe with no handler", "spec.containers[0].livenessProbe", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{PeriodSeconds: 10}
		}},
	}
	kinds := []struct {
		name string
		// template is the field path of the pod template in the object.
		template string
		create   func(name string, template corev1.PodTemplateSpec) error
	}{
		{"TApp", "spec.template", func(name string, template corev1.PodTemplateSpec) error {
			_, err := tappClient.TKEStackAppsV1().TApps(ns).Create(testContext(t, 30*time.Second), &tkestackv1.TApp{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec:       tkestackv1.TAppSpec{Replicas: 1, Template: template},
			}, metav1.CreateOptions{})
			return err
		}},
		{"YurtAppDaemon Deployment", "spec.workloadTemplate.deploymentTemplate.spec.template", func(name string, template corev1.PodTemplateSpec) error {
			yad := yadObject(name, "nginx:1.25", 1, false, map[string]string{"e2e": "none"})
			yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template = withLabel(template, name)
			_, err := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(testContext(t, 30*time.Second), yad, metav1.CreateOptions{})
			return err
		}},
		{"YurtAppDaemon StatefulSet", "spec.workloadTemplate.statefulSetTemplate.spec.template", func(name string, template corev1.PodTemplateSpec) error {
			yad := yadObject(name, "nginx:1.25", 1, true, map[string]string{"e2e": "none"})
			yad.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Template = withLabel(template, name)
			_, err := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(testContext(t, 30*time.Second), yad, metav1.CreateOptions{})
			return err
		}},
	}

	for n, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			// The unchanged template is accepted: the refusals below are about the defects.
			if err := k.create(fmt.Sprintf("valid-%d", n), podTemplate("app")); err != nil {
				t.Fatalf("creating a %s with a valid template: %v", k.name, err)
			}
			for i, d := range defects {
				template := podTemplate("app")
				d.mutate(&template)
				name := fmt.Sprintf("defect-%d-%d", n, i)
				err := k.create(name, template)
				want := k.template + "." + d.field
				if err == nil {
					t.Errorf("%s: created, want 422 naming %s", d.name, want)
					continue
				}
				fields, ok := causeFields(err)
				if !apierrors.IsInvalid(err) || !ok {
					t.Errorf("%s: %v, want 422 Invalid with causes", d.name, err)
					continue
				}
				found := false
				for _, f := range fields {
					if f == want || strings.HasPrefix(f, want+".") || strings.HasPrefix(f, want+"[") {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: causes on %q, want one on %s (%v)", d.name, fields, want, err)
				}
			}
		})
	}
}

// withLabel gives a YurtAppDaemon's pod template the label its selector (yadObject) wants.
func withLabel(template corev1.PodTemplateSpec, app string) corev1.PodTemplateSpec {
	template.Labels = map[string]string{"app": app}
	return template
}

// causeFields returns the fields of the causes of an API error.
func causeFields(err error) ([]string, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil, false
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	return fields, len(fields) > 0
}
