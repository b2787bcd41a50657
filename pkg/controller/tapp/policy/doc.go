// Package policy owns the pure decisions of the TApp controller.
//
// The TApp controller follows the layering of the Kubernetes StatefulSet controller:
//
//	controller (informers, workqueue, expectations)
//	  → policy (this package): given a TApp and its pods, decide what should happen
//	  → executor: create, delete and patch pods and claims through the API
//
// Nothing in this package talks to the API server, reads a clock or keeps state: every function is a
// function of its arguments, so the whole behaviour of a TApp (which instances exist, which template each
// one runs, what is updated in place, what is recreated, what is deleted, and the status the TApp reports)
// is tested as tables.
//
// The entry points are:
//   - TemplateNameFor / TemplateFor / RollingTemplateName: which template an instance runs;
//   - TemplateHash / UniqHash: stable, JSON based template hashes written to the pod labels;
//   - NewPod / NewPVCs: the objects to create for an instance;
//   - ComputePlan: the Plan of actions for one sync, including the status to report;
//   - InstanceStatuses / AppStatus / ComputeStatus: the status on its own.
//
// Deliberate differences from the original tkestack/tapp controller:
//   - hashes are sha256 over canonical JSON, stable across library upgrades; init container images are
//     part of the uniq hash, so changing them recreates the pod instead of half-applying in place;
//   - pods count only if controlled by the TApp (controllerRef UID) and named <tapp>-<id>; foreign pods
//     holding an instance's name are reported as Conflicts;
//   - every budgeted list is processed in ascending id order, and a pod that is already unavailable never
//     consumes budget, so force updates progress when no pod is available;
//   - status is a function of spec and pods only: Failed/Succ are not sticky, a wanted id without a pod is
//     always (re)created, and deleting a finished pod restarts its instance; finished pods that do not
//     migrate are kept, never deleted by the controller;
//   - a running pod held by the in-place readiness gate reports Updating (and counts as alive);
//   - in-place updates carry label/annotation removals, using the keys recorded on the pod by NewPod;
//   - claims from volumeClaimTemplates have no owner reference and are never deleted;
//   - force deletion waits until the pod's deletion deadline has passed.
package policy
