package policy

import (
	corev1 "k8s.io/api/core/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// Label keys written on every pod, shared with the original tkestack/tapp controller so that Services and
// selectors that use them keep working.
const (
	InstanceIDLabel   = tkestack.InstanceIDLabel
	TemplateHashLabel = tkestack.TemplateHashLabel
	UniqHashLabel     = tkestack.UniqHashLabel
)

// TemplateHash is tapppod.TemplateHash: the hash of the whole template, written to TemplateHashLabel.
func TemplateHash(t *corev1.PodTemplateSpec) string { return tapppod.TemplateHash(t) }

// UniqHash is tapppod.UniqHash: the hash of the template without container images, written to
// UniqHashLabel.
func UniqHash(t *corev1.PodTemplateSpec) string { return tapppod.UniqHash(t) }
