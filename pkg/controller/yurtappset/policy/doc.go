// Package policy owns the pure decisions of the YurtAppSet controller.
//
// The controller follows the layering of the Kubernetes StatefulSet controller:
//
//	controller (informers, workqueue, expectations, ControllerRevisions, status writes)
//	  → policy (this package): given a YurtAppSet, the NodePools, the existing workloads and the current
//	    revision, decide which Deployments or StatefulSets to adopt, create, update and delete, and the
//	    status to report
//	  → executor: the API calls
//
// Nothing here talks to the API server, reads a clock or keeps state; every list returned is sorted.
//
// Behaviour, as OpenYurt's yurt-manager (v1.7):
//   - the selected pools are the union of spec.pools (names; a name that does not exist is reported by
//     PoolFound False) and the pools whose labels match spec.nodepoolSelector; a nil selector selects none;
//   - one workload of the template's kind per selected pool, created with generateName "<yas>-<pool>-"
//     ("<yas>-" when that is not a valid name prefix), labelled PoolNameLabel, RevisionHashLabel (the
//     ControllerRevision name) and RefYurtAppSetLabel, annotated RefNodePoolAnnotation, with a controller
//     ownerReference; its selector and pods carry PoolNameLabel, its pods RevisionHashLabel;
//   - the rendering starts from workloadtweak.Base, the workload admission checks tweaks against; the pods
//     are pinned to the pool (pkg/controller/poolplacement: nodeSelector added to the template's, affinity
//     kept, the pool's taints tolerated, as for YurtAppDaemon), then the workloadTweaks whose pools or
//     nodepoolSelector select the pool are applied in list order by pkg/workloadtweak (a later tweak wins);
//   - a workload belongs to its YurtAppSet through the controller ownerReference (UID); an orphan labelled
//     RefYurtAppSetLabel=<yas> that serves a selected pool without a workload is adopted (yurt-manager's
//     workloads after a migration), one per pool; workloads of pools that left the selection, of the
//     other kind, naming no pool, and all but the oldest of one pool are deleted.
//
// Deliberate differences:
//   - a workload is updated when its content differs from the rendering (compared field by field,
//     ignoring the revision label and the fields the API server sets), not merely when its revision label
//     differs: when only the revision changed, or an adopted workload already runs what this YurtAppSet
//     renders, only its metadata and workload-level fields are written and its pod template is kept, so
//     no pod is restarted; a template without replicas leaves replicas unmanaged;
//   - the pool's taints are tolerated (as YurtAppDaemon's workloads; yurt-manager leaves that to the
//     template), and a change of them re-renders the pods of that pool only;
//   - identity labels a patch removes are put back (pkg/workloadtweak), so OpenYurt's own example, whose
//     patch replaces metadata.labels, keeps its workloads recognisable;
//   - an orphan is adopted only for a selected pool that has no workload (never to be deleted), and
//     ControllerRevisions beyond revisionHistoryLimit are counted without the current one and those in use;
//   - a failed NodePool list never reaches this package (the controller stops), so it never deletes on
//     an incomplete view.
package policy
