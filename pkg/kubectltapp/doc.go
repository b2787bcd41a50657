// Package kubectltapp owns the kubectl plugin `kubectl tapp` (binary kubectl-tapp, cmd/kubectl-tapp): the
// commands that look at and act on the instances of a TApp (instances, kill, revive, restart) and its
// rollouts (rollout status, history, undo, pause, resume, restart), with the kubectl connection flags of
// k8s.io/cli-runtime (-n, --context, --kubeconfig, ...).
//
// The decisions are pure functions of a TApp, its pods and its ControllerRevisions, tested as tables: the
// rows of `instances` (InstanceRows), the patches the verbs send (StatusesPatch, RestartPatch, PausePatch,
// UndoPatch), the validation of instance ids (CheckIDs), whether a rollout is finished (EvaluateRollout),
// the history (OwnedRevisions, HistoryRows) and the revision an undo restores (RollbackTarget). The commands
// around them read and write through the generated TApp clientset and client-go. Which template an instance
// runs, its template hash, its pod's state and the content of a revision come from the TApp controller's
// policy (pkg/controller/tapp/policy), so the plugin judges a rollout as the controller does.
package kubectltapp
