package podtemplate

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// SupportedProtocols are the container port protocols a template may use. An empty protocol is accepted
// too: defaulting (SetPortDefaults) turns it into TCP.
var SupportedProtocols = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}

// SupportedRestartPolicies are the pod restart policies a template may use. An empty policy is accepted too
// and means Always, as in the core API.
var SupportedRestartPolicies = []string{
	string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyNever), string(corev1.RestartPolicyOnFailure),
}

// ValidatePodTemplateSpec checks an embedded pod template. claimNames are the names of volume claim
// templates that a volumeMount may refer to in addition to the pod's own volumes.
//
// The checks are those a controller needs to create pods that the core API accepts in the common cases:
// valid metadata, at least one container, unique DNS-1123 container names, images (set, without
// whitespace), ports, resize policies, restart policy, requests within limits, a grace period that is not negative, unique
// volumes that name a source, and resolvable volume mounts. Errors carry paths below fldPath.
func ValidatePodTemplateSpec(template *corev1.PodTemplateSpec, claimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	if template == nil {
		return field.ErrorList{field.Required(fldPath, "a pod template is required")}
	}
	allErrs := validateTemplateMetadata(&template.ObjectMeta, fldPath.Child("metadata"))
	allErrs = append(allErrs, validatePodSpec(&template.Spec, claimNames, fldPath.Child("spec"))...)
	return allErrs
}

// ValidatePodTemplateLabelsMatchSelector reports an error on <fldPath>.metadata.labels when selector does not
// select the labels of template. A nil selector selects nothing.
func ValidatePodTemplateLabelsMatchSelector(template *corev1.PodTemplateSpec, selector labels.Selector, fldPath *field.Path) field.ErrorList {
	if selector != nil && template != nil && selector.Matches(labels.Set(template.Labels)) {
		return nil
	}
	var templateLabels map[string]string
	if template != nil {
		templateLabels = template.Labels
	}
	return field.ErrorList{field.Invalid(fldPath.Child("metadata", "labels"), templateLabels,
		"`selector` does not match template `labels`")}
}

func validateTemplateMetadata(meta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := metav1validation.ValidateLabels(meta.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(meta.Annotations, fldPath.Child("annotations"))...)
	return allErrs
}

func validatePodSpec(spec *corev1.PodSpec, claimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	volumeNames, allErrs := validateVolumes(spec.Volumes, fldPath.Child("volumes"))
	mountable := volumeNames.Union(claimNames)

	if len(spec.Containers) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("containers"), "must have at least one container"))
	}
	containerNames := sets.New[string]()
	portNames := sets.New[string]()
	allErrs = append(allErrs, validateContainers(spec.InitContainers, spec.RestartPolicy, containerNames, portNames, mountable, fldPath.Child("initContainers"))...)
	allErrs = append(allErrs, validateContainers(spec.Containers, spec.RestartPolicy, containerNames, portNames, mountable, fldPath.Child("containers"))...)
	if len(spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("ephemeralContainers"), "ephemeral containers are not allowed in a pod template"))
	}

	allErrs = append(allErrs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"))...)
	// The core API turns a negative grace period of a pod into 1 and accepts it in a workload's template:
	// refused here, as kube-apiserver refuses it in a pod's delete options.
	if spec.TerminationGracePeriodSeconds != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(*spec.TerminationGracePeriodSeconds,
			fldPath.Child("terminationGracePeriodSeconds"))...)
	}
	if spec.Resources != nil {
		allErrs = append(allErrs, validateResources(spec.Resources, fldPath.Child("resources"))...)
	}
	return allErrs
}

// validateVolumes checks that volume names are unique DNS-1123 labels and that every volume names a source,
// and returns the valid names. (The core API would make a volume without a source an emptyDir; a stored
// template says which volume its pods get.)
func validateVolumes(volumes []corev1.Volume, fldPath *field.Path) (sets.Set[string], field.ErrorList) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, volume := range volumes {
		if ptr.AllPtrFieldsNil(&volume.VolumeSource) {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), "must specify a volume type"))
		}
		namePath := fldPath.Index(i).Child("name")
		errs := validateDNSLabelName(volume.Name, namePath)
		if len(errs) == 0 && names.Has(volume.Name) {
			errs = append(errs, field.Duplicate(namePath, volume.Name))
		}
		if len(errs) == 0 {
			names.Insert(volume.Name)
		}
		allErrs = append(allErrs, errs...)
	}
	return names, allErrs
}

// validateContainers checks one container list. containerNames and portNames collect names across the lists
// of a pod so that duplicates are found between init containers and containers too.
func validateContainers(containers []corev1.Container, podRestartPolicy corev1.RestartPolicy,
	containerNames, portNames, mountable sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := range containers {
		container := &containers[i]
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateResizePolicy(container.ResizePolicy, podRestartPolicy, idxPath.Child("resizePolicy"))...)
		allErrs = append(allErrs, validateContainerName(container.Name, containerNames, idxPath.Child("name"))...)
		if strings.TrimSpace(container.Image) == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("image"), "a container image is required"))
		} else if strings.ContainsFunc(container.Image, unicode.IsSpace) {
			// No image reference has whitespace; the core API checks only a pod's leading and trailing
			// whitespace and none in a workload's template, and the kubelet cannot pull it.
			allErrs = append(allErrs, field.Invalid(idxPath.Child("image"), container.Image, "must not contain whitespace"))
		}
		allErrs = append(allErrs, validatePorts(container.Ports, portNames, idxPath.Child("ports"))...)
		allErrs = append(allErrs, validateResources(&container.Resources, idxPath.Child("resources"))...)
		allErrs = append(allErrs, validateVolumeMounts(container.VolumeMounts, mountable, idxPath.Child("volumeMounts"))...)
		allErrs = append(allErrs, validateVolumeDevices(container.VolumeDevices, mountable, idxPath.Child("volumeDevices"))...)
	}
	return allErrs
}

// SupportedResizeResources are the resources a container's resizePolicy may name.
var SupportedResizeResources = []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory)}

// SupportedResizeRestartPolicies are the values of a resizePolicy entry's restartPolicy.
var SupportedResizeRestartPolicies = []string{string(corev1.NotRequired), string(corev1.RestartContainer)}

// validateResizePolicy checks a container's resizePolicy (of a container or an init container) as the core
// API does: one entry per resource, each naming cpu or memory and a restart policy (no defaulting fills
// either), and only NotRequired in a pod whose restartPolicy is Never (a restarted container would never come
// back).
func validateResizePolicy(policies []corev1.ContainerResizePolicy, podRestartPolicy corev1.RestartPolicy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, policy := range policies {
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("resourceName")
		switch {
		case policy.ResourceName == "":
			allErrs = append(allErrs, field.Required(namePath, ""))
		case !sets.New(SupportedResizeResources...).Has(string(policy.ResourceName)):
			allErrs = append(allErrs, field.NotSupported(namePath, policy.ResourceName, SupportedResizeResources))
		case seen.Has(policy.ResourceName):
			allErrs = append(allErrs, field.Duplicate(namePath, policy.ResourceName))
		}
		seen.Insert(policy.ResourceName)
		policyPath := idxPath.Child("restartPolicy")
		switch {
		case policy.RestartPolicy == "":
			allErrs = append(allErrs, field.Required(policyPath, ""))
		case !sets.New(SupportedResizeRestartPolicies...).Has(string(policy.RestartPolicy)):
			allErrs = append(allErrs, field.NotSupported(policyPath, policy.RestartPolicy, SupportedResizeRestartPolicies))
		case podRestartPolicy == corev1.RestartPolicyNever && policy.RestartPolicy != corev1.NotRequired:
			allErrs = append(allErrs, field.Invalid(policyPath, policy.RestartPolicy,
				fmt.Sprintf("must be %s when the pod's restartPolicy is %s", corev1.NotRequired, corev1.RestartPolicyNever)))
		}
	}
	return allErrs
}

func validateContainerName(name string, seen sets.Set[string], fldPath *field.Path) field.ErrorList {
	if errs := validateDNSLabelName(name, fldPath); len(errs) > 0 {
		return errs
	}
	if seen.Has(name) {
		return field.ErrorList{field.Duplicate(fldPath, name)}
	}
	seen.Insert(name)
	return nil
}

func validatePorts(ports []corev1.ContainerPort, portNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, port := range ports {
		idxPath := fldPath.Index(i)
		for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("containerPort"), port.ContainerPort, msg))
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostPort"), port.HostPort, msg))
			}
		}
		if port.Protocol != "" && !sets.New(SupportedProtocols...).Has(string(port.Protocol)) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), port.Protocol, SupportedProtocols))
		}
		allErrs = append(allErrs, validatePortName(port.Name, portNames, idxPath.Child("name"))...)
	}
	return allErrs
}

func validatePortName(name string, seen sets.Set[string], fldPath *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsValidPortName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	if seen.Has(name) {
		return field.ErrorList{field.Duplicate(fldPath, name)}
	}
	seen.Insert(name)
	return nil
}

func validateRestartPolicy(policy corev1.RestartPolicy, fldPath *field.Path) field.ErrorList {
	if policy == "" || sets.New(SupportedRestartPolicies...).Has(string(policy)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, policy, SupportedRestartPolicies)}
}

// validateResources checks that no quantity is negative and that every request is at most its limit.
func validateResources(resources *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonNegativeQuantities(resources.Limits, fldPath.Child("limits"))
	allErrs = append(allErrs, validateNonNegativeQuantities(resources.Requests, fldPath.Child("requests"))...)
	for _, name := range sortedResourceNames(resources.Requests) {
		request := resources.Requests[name]
		limit, ok := resources.Limits[name]
		if ok && request.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("requests").Key(string(name)), request.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return allErrs
}

func validateNonNegativeQuantities(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sortedResourceNames(list) {
		quantity := list[name]
		if quantity.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(string(name)), quantity.String(), "must be greater than or equal to 0"))
		}
	}
	return allErrs
}

func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

func validateVolumeMounts(mounts []corev1.VolumeMount, mountable sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, mount := range mounts {
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateVolumeReference(mount.Name, mountable, idxPath.Child("name"))...)
		if mount.MountPath == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("mountPath"), ""))
		}
	}
	return allErrs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, mountable sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, device := range devices {
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateVolumeReference(device.Name, mountable, idxPath.Child("name"))...)
		if device.DevicePath == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("devicePath"), ""))
		}
	}
	return allErrs
}

func validateVolumeReference(name string, mountable sets.Set[string], fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !mountable.Has(name) {
		return field.ErrorList{field.NotFound(fldPath, name)}
	}
	return nil
}

func validateDNSLabelName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}
