package policy

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// resizable reports whether pod, which carries our hash labels, differs from the template only in the images
// and resources of regular containers and metadata, with the same QoS class (tapppod.ResizeHash): the
// change is applied in place, resizing the pod. A pod without the resize hash label is not resizable.
func (info *templateInfo) resizable(pod *corev1.Pod) bool {
	have := pod.Labels[tapppod.ResizeHashLabel]
	return have != "" && have == info.resize && !ForeignHashes(pod)
}

// resizeInfeasible returns why pod, whose in-place update includes a resize, must be recreated: the kubelet
// marks the resize infeasible (inplace.Check); "" otherwise.
func resizeInfeasible(pod *corev1.Pod) string {
	if state, ok := inplace.ParseState(pod); !ok || len(state.Resize) == 0 {
		return ""
	}
	if r := inplace.Check(pod); r.Infeasible {
		return r.Message
	}
	return ""
}
