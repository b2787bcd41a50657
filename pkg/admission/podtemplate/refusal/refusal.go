// Package refusal sorts the core API's answers to a dry-run create of a pod, Deployment or StatefulSet into
// what they say about the template it was made from: a defect of the template, a passing state of the
// namespace, or no answer at all.
//
// It reads the metav1.Status the core API returns: its reason (with the HTTP code as fallback, as
// k8s.io/apimachinery/pkg/api/errors does), its causes and its details. The admission plugins of the core API
// say only part of it there, so part is read from the message:
//
//   - a terminating namespace: the NamespaceTerminating cause of the NamespaceLifecycle plugin;
//   - a missing namespace: NotFound with details kind "namespaces";
//   - an authorization denial: Forbidden with details kind (the resource, "pods" or "deployments") and no
//     name. The authorizer answers before there is an object, so it names none; an admission refusal always
//     names the object (its name, its generateName, or "Unknown", see
//     k8s.io/apiserver/pkg/admission.NewForbidden);
//   - the refusals of ResourceQuota that depend on usage, and the refusals of ServiceAccount, Priority and
//     RuntimeClass because the object the pod names does not exist: these plugins return a plain Forbidden
//     with no cause and nothing in the details but the pod, so the message is all there is. Only these
//     classes read the message, each by the fixed text its plugin writes.
package refusal

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Class is what an answer to a dry-run pod create says about the template.
type Class int

const (
	// Created: the pod would be created.
	Created Class = iota
	// Invalid: 422, the pod is invalid (validation, or an admission policy); the causes say where.
	Invalid
	// Refused: 403 from admission (PodSecurity, LimitRanger, a quota's required requests or limits, a
	// webhook or policy) or 400 (a webhook): a lasting reason why no pod of the template is created.
	Refused
	// UsageQuota: a ResourceQuota refusal that depends on the namespace's current usage or on the state of
	// the quota objects, not on the template.
	UsageQuota
	// MissingServiceAccount: the pod's ServiceAccount does not exist (yet).
	MissingServiceAccount
	// MissingReference: the pod's PriorityClass or RuntimeClass does not exist (yet).
	MissingReference
	// NamespaceTerminating: the namespace is being deleted.
	NamespaceTerminating
	// NamespaceNotFound: the namespace does not exist.
	NamespaceNotFound
	// NameTaken: the generated name collided with an existing pod; nothing is known about the template.
	NameTaken
	// AuthorizationDenied: the client may not create pods in the namespace. A deployment problem, not a
	// template one.
	AuthorizationDenied
	// Unavailable: no answer about the template (the core API unreachable, timeouts, 429, 5xx, a failing
	// webhook, or an answer none of the above).
	Unavailable
)

var classNames = [...]string{"Created", "Invalid", "Refused", "UsageQuota", "MissingServiceAccount", "MissingReference",
	"NamespaceTerminating", "NamespaceNotFound", "NameTaken", "AuthorizationDenied", "Unavailable"}

func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return "Class(?)"
}

// Refusal is a classified answer.
type Refusal struct {
	Class Class
	// Status is the core API's status, when it answered with one.
	Status *metav1.Status
	// Message is the status message without its `pods "<name>" is forbidden: ` prefix (the dry-run object's
	// name means nothing to the user).
	Message string
}

// Classify classifies the error of a dry-run pod create; nil is Created.
func Classify(err error) Refusal {
	if err == nil {
		return Refusal{Class: Created}
	}
	var apiStatus apierrors.APIStatus
	if !errors.As(err, &apiStatus) {
		return Refusal{Class: Unavailable, Message: err.Error()}
	}
	s := apiStatus.Status()
	r := Refusal{Status: &s, Message: stripObjectPrefix(s.Message)}
	var details metav1.StatusDetails
	if s.Details != nil {
		details = *s.Details
	}
	switch {
	case apierrors.IsInvalid(err):
		r.Class = Invalid
	case apierrors.IsForbidden(err):
		r.Class = forbidden(details, r.Message)
	case apierrors.IsBadRequest(err):
		r.Class = Refused
	case apierrors.IsNotFound(err) && details.Group == "" && details.Kind == "namespaces":
		r.Class = NamespaceNotFound
	case apierrors.IsAlreadyExists(err):
		r.Class = NameTaken
	default:
		r.Class = Unavailable
	}
	return r
}

func forbidden(details metav1.StatusDetails, message string) Class {
	for _, c := range details.Causes {
		if c.Type == corev1.NamespaceTerminatingCause {
			return NamespaceTerminating
		}
	}
	if details.Kind != "" && details.Name == "" && len(details.Causes) == 0 {
		return AuthorizationDenied
	}
	// The rest is a plain Forbidden of an admission plugin; only the message tells them apart.
	switch {
	case isUsageQuotaRefusal(message):
		return UsageQuota
	case strings.HasPrefix(message, "error looking up service account "):
		return MissingServiceAccount
	case strings.HasPrefix(message, "no PriorityClass with name "),
		strings.HasPrefix(message, "pod rejected: RuntimeClass ") && strings.HasSuffix(message, " not found"):
		return MissingReference
	}
	return Refused
}

// isUsageQuotaRefusal recognises the ResourceQuota refusals that depend on current usage or on the state of
// the quota objects. "failed quota: <name>: must specify ..." is not one: the template lacks requests or
// limits the quota demands.
func isUsageQuotaRefusal(message string) bool {
	for _, prefix := range []string{"exceeded quota:", "status unknown for quota:", "quota usage is negative", "insufficient quota to"} {
		if strings.HasPrefix(message, prefix) {
			return true
		}
	}
	return false
}

// stripObjectPrefix removes `pods "<name>" is forbidden: `, `Pod "<name>" is invalid: `,
// `Deployment.apps "<name>" is invalid: ` and the like: a resource or kind, a quoted name, then the verdict.
func stripObjectPrefix(message string) string {
	what, rest, ok := strings.Cut(message, ` "`)
	if !ok || what == "" || strings.ContainsAny(what, " :") {
		return message
	}
	_, rest, ok = strings.Cut(rest, `"`)
	if !ok {
		return message
	}
	for _, verdict := range []string{" is forbidden: ", " is invalid: "} {
		if after, ok := strings.CutPrefix(rest, verdict); ok {
			return after
		}
	}
	return message
}
