package app

import (
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// Feature gates whose default this server changes from the library's; --feature-gates still sets them.
//
// ListFromCacheSnapshot is off. With it, the watch cache keeps a copy-on-write snapshot of its index for
// every event in its window, so that the next pages of a paginated list and lists at an exact resource
// version are served from memory. With 10,000 TApps written in a burst those snapshots held about 28 MiB of
// the server's resident set (docs/benchmarks.md, section 2): more than the objects themselves once the
// watch cache shares their repeated parts. Without it those lists are read from etcd, which this server
// reaches in-process, as every Kubernetes release before 1.34 did; the first page and every list without a
// continue token are still served from the watch cache.
func init() {
	utilruntime.Must(utilfeature.DefaultMutableFeatureGate.OverrideDefault(genericfeatures.ListFromCacheSnapshot, false))
}
