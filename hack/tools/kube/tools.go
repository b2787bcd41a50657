//go:build tools

// Package kube pins the Kubernetes components the local cluster and the end-to-end tests run:
// kube-apiserver, kube-controller-manager, kube-scheduler and kubectl, all v1.36.3.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
