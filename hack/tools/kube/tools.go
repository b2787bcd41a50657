//go:build tools

// Package kube pins the Kubernetes components the local cluster and the end-to-end tests run:
// kube-apiserver, kube-controller-manager, kube-scheduler and kubectl, all v1.36.3, and etcdutl of the
// etcd release cmd/etcd is built from (snapshot restores with a bumped revision, docs/storage.md).
package kube

import (
	_ "go.etcd.io/etcd/etcdutl/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
