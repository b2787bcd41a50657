package openyurt

// WorkloadTemplateType is the kind of workload a YurtAppDaemon's workloadTemplate renders, given which of its
// templates are set: Deployment or StatefulSet when exactly one is, "" when none or both are. Validation
// refuses a template without a kind; the registry then records no status.templateType and the controller
// renders nothing.
func WorkloadTemplateType(hasDeploymentTemplate, hasStatefulSetTemplate bool) TemplateType {
	switch {
	case hasDeploymentTemplate && !hasStatefulSetTemplate:
		return DeploymentTemplateType
	case hasStatefulSetTemplate && !hasDeploymentTemplate:
		return StatefulSetTemplateType
	}
	return ""
}
