package podtemplate

import (
	"context"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/workloadtweak"
)

// A YurtAppSet's workloads are checked as a YurtAppDaemon's are: the workload its template renders for any
// pool (workloadtweak.Base, what the controller renders before the pool's tolerations), and, for every tweak
// that changes more than replicas, that workload with the tweak applied alone (as validation applies it,
// package workloadtweak): the core API sees each rendering a pool can get from one tweak. A refusal of the
// template itself is reported once, under the template; a tweak's rendering reports only what its tweak adds,
// under spec.workload.workloadTweaks[i].tweaks followed by the workload's field.

var (
	yurtAppSetsResource = openyurt.Resource("yurtappsets")
	yasSubject          = subject{kind: openyurt.Kind("YurtAppSet"), template: "workload template", templates: "workload templates"}
	yasControllerKind   = v1beta1.SchemeGroupVersion.WithKind("YurtAppSet")
)

// validateYurtAppSet checks the workloads of a YurtAppSet create or update.
func (p *Plugin) validateYurtAppSet(ctx context.Context, a admission.Attributes) error {
	yas, ok := a.GetObject().(*openyurt.YurtAppSet)
	if !ok {
		return nil
	}
	var old *openyurt.YurtAppSet
	if a.GetOperation() == admission.Update {
		if old, ok = a.GetOldObject().(*openyurt.YurtAppSet); !ok {
			return nil
		}
		if apiequality.Semantic.DeepEqual(old.Spec.Workload, yas.Spec.Workload) {
			return nil // nothing its workloads are rendered from changed
		}
	}
	namespace := namespaceOf(a, yas.Namespace)
	checks, err := buildYurtAppSetChecks(yas, namespace)
	if err != nil {
		klog.ErrorS(err, "Cannot build the dry-run workloads of a YurtAppSet", "yurtAppSet", klog.KRef(namespace, yas.Name))
		return nil
	}
	if len(checks) > 0 {
		group, resource, _, _ := dryRunTarget(checks[0].object)
		if generation, remember := p.remembering(group, resource); remember {
			keyYAS := yas.DeepCopy()
			keyYAS.Name, keyYAS.UID = p.verdicts.keyName(yas.Name), keyUID(yas.UID)
			if keyChecks, err := buildYurtAppSetChecks(keyYAS, namespace); err == nil && len(keyChecks) == len(checks) {
				for i, c := range checks {
					c.key, c.generation = verdictKeyOrEmpty(namespace, keyChecks[i].object), generation
				}
			}
		}
	}
	return p.check(ctx, yasSubject, yas.Name, namespace, checks)
}

// buildYurtAppSetChecks returns the check of the template's rendering, then one per tweak that sets
// container images or patches. A tweak that cannot be applied is left to validation, which refused it.
func buildYurtAppSetChecks(yas *openyurt.YurtAppSet, namespace string) ([]*templateCheck, error) {
	wt := &yas.Spec.Workload.WorkloadTemplate
	base := workloadtweak.Base{YurtAppSet: yas.Name, Namespace: namespace, Pool: dryRunPool, Revision: dryRunRevision}
	workloadPath := field.NewPath("spec", "workload")
	var render func(tweak *v1beta1.Tweaks) (runtime.Object, error)
	var template *field.Path
	switch {
	case wt.DeploymentTemplate != nil && wt.StatefulSetTemplate == nil:
		template = workloadPath.Child("workloadTemplate", "deploymentTemplate")
		render = func(tweak *v1beta1.Tweaks) (runtime.Object, error) {
			d := base.Deployment(&wt.DeploymentTemplate.ObjectMeta, &wt.DeploymentTemplate.Spec)
			yasDryRunMeta(yas, &d.ObjectMeta)
			if tweak != nil {
				if err := workloadtweak.ApplyToDeployment(d, dryRunPool, []v1beta1.Tweaks{*tweak}); err != nil {
					return nil, err
				}
			}
			return d, nil
		}
	case wt.StatefulSetTemplate != nil && wt.DeploymentTemplate == nil:
		template = workloadPath.Child("workloadTemplate", "statefulSetTemplate")
		render = func(tweak *v1beta1.Tweaks) (runtime.Object, error) {
			s := base.StatefulSet(&wt.StatefulSetTemplate.ObjectMeta, &wt.StatefulSetTemplate.Spec)
			yasDryRunMeta(yas, &s.ObjectMeta)
			if tweak != nil {
				if err := workloadtweak.ApplyToStatefulSet(s, dryRunPool, []v1beta1.Tweaks{*tweak}); err != nil {
					return nil, err
				}
			}
			return s, nil
		}
	default:
		return nil, nil // validation refused it
	}
	object, err := render(nil)
	if err != nil {
		return nil, err
	}
	baseline := &templateCheck{template: template, object: object, fieldPath: yasWorkloadField(template)}
	checks := []*templateCheck{baseline}
	for i := range yas.Spec.Workload.WorkloadTweaks {
		tweak := &yas.Spec.Workload.WorkloadTweaks[i].Tweaks
		if len(tweak.ContainerImages) == 0 && len(tweak.Patches) == 0 {
			continue // replicas alone change nothing the core API judges beyond validation's check
		}
		var versioned v1beta1.Tweaks
		if err := v1beta1.Convert_openyurt_Tweaks_To_v1beta1_Tweaks(tweak, &versioned, nil); err != nil {
			return nil, err
		}
		object, err := render(&versioned)
		if err != nil {
			continue
		}
		tweakPath := workloadPath.Child("workloadTweaks").Index(i).Child("tweaks")
		checks = append(checks, &templateCheck{template: tweakPath, object: object, fieldPath: yasWorkloadField(tweakPath), baseline: baseline})
	}
	return checks, nil
}

// yasDryRunMeta names the dry-run workload with generateName "<yas>-" and, in a real request (with a uid),
// makes the YurtAppSet its controller as the controller does.
func yasDryRunMeta(yas *openyurt.YurtAppSet, meta *metav1.ObjectMeta) {
	meta.Name, meta.GenerateName = "", yas.Name+"-"
	meta.OwnerReferences = nil
	if yas.UID != "" {
		meta.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(yas, yasControllerKind)}
	}
}

// yasWorkloadField maps a field path of a YurtAppSet's dry-run workload onto the YurtAppSet: its name to
// metadata.name, its namespace to metadata.namespace, and everything else under template (the template,
// or the tweak the workload was rendered with).
func yasWorkloadField(template *field.Path) func(string) string {
	return func(f string) string {
		switch {
		case f == "" || f == "<nil>":
			return template.String()
		case f == "metadata.name" || f == "metadata.generateName":
			return "metadata.name"
		case f == "metadata.namespace":
			return "metadata.namespace"
		}
		return underTemplate(template, f)
	}
}

// sameAsBaseline reports whether e, an error of check c, is one its baseline's rendering got too (the same
// type, detail and workload field): the template's problem, reported under the template already.
func sameAsBaseline(c *templateCheck, e *field.Error, baselineErrs field.ErrorList) bool {
	for _, b := range baselineErrs {
		if b.Type == e.Type && b.Detail == e.Detail &&
			strings.TrimPrefix(b.Field, c.baseline.template.String()) == strings.TrimPrefix(e.Field, c.template.String()) {
			return true
		}
	}
	return false
}
