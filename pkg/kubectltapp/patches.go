package kubectltapp

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// RestartedAtAnnotation is the pod template annotation `rollout restart` sets to the current time, the one
// kubectl rollout restart sets on Deployments, StatefulSets and DaemonSets; the TApp controller replaces the
// pods of a template whose value changed.
const RestartedAtAnnotation = tapppod.RestartedAtAnnotation

// CheckIDs returns the ids in the order given, without repeats, or an error naming every id that is not an
// instance of tapp (not a canonical id, or not below spec.replicas).
func CheckIDs(tapp *tkestackv1.TApp, ids []string) ([]string, error) {
	var unknown, unique []string
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if n, ok := tapppod.ParseID(id); !ok || n >= int(tapp.Spec.Replicas) {
			unknown = append(unknown, id)
			continue
		}
		unique = append(unique, id)
	}
	if len(unknown) > 0 {
		valid := "it has no instances (replicas 0)"
		if tapp.Spec.Replicas > 0 {
			valid = fmt.Sprintf("its ids are 0..%d", tapp.Spec.Replicas-1)
		}
		return nil, fmt.Errorf("TApp %s/%s has no instance %q: %s", tapp.Namespace, tapp.Name, unknown, valid)
	}
	if len(unique) == 0 {
		return nil, fmt.Errorf("no instance id given")
	}
	return unique, nil
}

// StatusesPatch returns the JSON merge patch that sets spec.statuses[id] to Killed for every id (kill), or
// removes those entries (revive). The ids are the ones whose state changes; the patch touches nothing else.
func StatusesPatch(ids []string, kill bool) ([]byte, error) {
	statuses := make(map[string]interface{}, len(ids))
	for _, id := range ids {
		if kill {
			statuses[id] = policy.StatusKilled
		} else {
			statuses[id] = nil
		}
	}
	return json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"statuses": statuses}})
}

// SplitByKilled splits ids into those spec.statuses marks Killed and the others.
func SplitByKilled(tapp *tkestackv1.TApp, ids []string) (killed, alive []string) {
	for _, id := range ids {
		if policy.IsKilled(tapp, id) {
			killed = append(killed, id)
		} else {
			alive = append(alive, id)
		}
	}
	return killed, alive
}

// RestartPatch returns the JSON merge patch that sets RestartedAtAnnotation to at (RFC 3339) in the metadata
// of spec.template and of every templatePool entry, so that every template gets a new hash and every
// instance is rolled (as kubectl rollout restart does for a workload's template).
func RestartPatch(tapp *tkestackv1.TApp, at time.Time) ([]byte, error) {
	meta := map[string]interface{}{"metadata": map[string]interface{}{
		"annotations": map[string]string{RestartedAtAnnotation: at.Format(time.RFC3339)}}}
	spec := map[string]interface{}{"template": meta}
	if len(tapp.Spec.TemplatePool) > 0 {
		pool := make(map[string]interface{}, len(tapp.Spec.TemplatePool))
		for _, name := range sortedPoolNames(tapp) {
			pool[name] = meta
		}
		spec["templatePool"] = pool
	}
	return json.Marshal(map[string]interface{}{"spec": spec})
}

func sortedPoolNames(tapp *tkestackv1.TApp) []string {
	names := make([]string, 0, len(tapp.Spec.TemplatePool))
	for name := range tapp.Spec.TemplatePool {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// PausePatch returns the JSON merge patch that sets spec.updateStrategy.paused (pause) or removes it
// (resume: false is the default, and the field is omitted when false).
func PausePatch(pause bool) ([]byte, error) {
	var paused interface{}
	if pause {
		paused = true
	}
	return json.Marshal(map[string]interface{}{"spec": map[string]interface{}{
		"updateStrategy": map[string]interface{}{"paused": paused}}})
}
