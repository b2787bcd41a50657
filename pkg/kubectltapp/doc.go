// Package kubectltapp owns the kubectl plugin `kubectl tapp` (binary kubectl-tapp, cmd/kubectl-tapp): the
// commands that look at and act on the instances of a TApp (instances, kill, revive, restart) and its
// rollouts (rollout status, history, undo, pause, resume, restart), with the kubectl connection flags of
// k8s.io/cli-runtime (-n, --context, --kubeconfig, ...).
//
// The decisions are pure functions of a TApp and its pods, tested as tables: the rows of `instances`
// (InstanceRows), the patches the verbs send (StatusesPatch, RestartPatch, PausePatch, UndoPatch), the
// validation of instance ids (CheckIDs) and whether a rollout is finished (EvaluateRollout). The commands
// around them read and write through the generated TApp clientset and client-go. Which template an instance
// runs, its template hash and its pod's state come from the TApp controller's policy
// (pkg/controller/tapp/policy), so the plugin judges a rollout as the controller does.
package kubectltapp
