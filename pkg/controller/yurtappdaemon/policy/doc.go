// Package policy owns the pure decisions of the YurtAppDaemon controller.
//
// The YurtAppDaemon controller follows the layering of the Kubernetes StatefulSet controller:
//
//	controller (informers, workqueue, ControllerRevisions, status writes)
//	  → policy (this package): given a YurtAppDaemon, the NodePools and the existing child workloads,
//	    decide which Deployments or StatefulSets to create, update and delete, and what status to report
//	  → executor: create, update and delete the children through the API
//
// Nothing in this package talks to the API server, reads a clock or keeps state: every function is a
// function of its arguments, and every list it returns is sorted, so the behaviour is tested as tables.
//
// The entry points are:
//   - SelectPools: the NodePools a YurtAppDaemon selects, sorted by name;
//   - Revision / RevisionName / TemplateJSON: the stable revision of the workload template;
//   - ChildName: the deterministic name of the child of one pool;
//   - TemplateType: the kind of the template (Deployment or StatefulSet);
//   - RenderDeployment / RenderStatefulSet: the child of one pool at one revision, built with
//     PinPodTemplate, PoolTolerations and PlacementHash;
//   - ComputePlan: the Plan of one sync (adoptions, releases, creates, updates, deletes, conflicts) and the
//     Status to report; Owner: the YurtAppDaemon as pkg/ownership sees it;
//   - ApplyStatus / SetCondition: merge that Status into the API status without touching transition times
//     of unchanged conditions.
//
// Deliberate differences from the original OpenYurt controller:
//   - the pool list is taken as given: the controller must not call ComputePlan when listing NodePools
//     failed (a failed list is never "zero pools"); a nil nodepoolSelector selects no pool, {} selects all;
//   - StatefulSet templates are rendered and planned exactly like Deployment templates;
//   - child names are deterministic, <yad>-<pool>, or a truncated prefix plus a hash of the pair when that
//     is longer than MaxChildNameLength or not a DNS-1123 label (StatefulSet pods are named <sts>-<ordinal>
//     and labelled controller-revision-hash=<sts>-<hash>, both must stay ≤ 63);
//   - a child is mapped to its pool by the apps.openyurt.io/pool-name label (the ref-nodepool annotation is
//     a fallback for children of the original controller), never by parsing its name; only children whose
//     controller ownerRef is this YurtAppDaemon (UID) are considered;
//   - ownership follows the built-in controllers (pkg/ownership), with spec.selector matched
//     against the labels of a workload's pod template: an orphan workload of the template's kind that names
//     a selected pool and whose pods the selector matches is adopted under its existing name (Adoptions;
//     yurt-app-manager's <yad>-<pool>-<random> workloads keep their names and are not recreated), at most
//     one per pool (the oldest) and only for a pool without a child; a child whose pods the selector no
//     longer matches is released (Releases) and, if it holds a child's name, is a conflict from then on;
//   - an adopted child whose pod template is the original controller's rendering of the current template
//     (OriginalPodTemplate, recognised by content with RunsOriginalRendering, as the TApp controller
//     judges tkestack/tapp's pods) keeps that pod template: only its metadata records the current revision
//     (AdoptedTemplateAnnotation), so a migration replaces no pod; the pod template is rendered again when
//     the template, the pool's taints or the containers change;
//   - two children for one pool: the oldest is kept, the others deleted; a workload that holds a wanted
//     name but is not ours is reported as a Conflict and never touched;
//   - the template's nodeSelector and affinity are kept, the pool pinning (apps.openyurt.io/nodepool) is
//     added to nodeSelector (the scheduler ANDs nodeSelector with required node affinity); tolerations of
//     the pool taints are added unless the template already tolerates them;
//   - the revision hash is sha256 over canonical JSON of the workload template with replicas left out:
//     a change of replicas alone scales the children (the pod template is unchanged, no pod restarts),
//     any other template change is a new revision and re-renders every child;
//   - a template without replicas leaves replicas unmanaged (an HPA or kubectl scale is not fought);
//   - the pool's taints are recorded in a hash annotation on the child, so adding or removing a taint
//     re-renders the child of that pool only; drift of the pinning, of the labels, of the replicas and of
//     the container images is repaired;
//   - status.nodepools is sorted, currentRevision is always the revision of the current template, and the
//     conditions carry CamelCase reasons and messages.
package policy
