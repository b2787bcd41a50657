package tapp

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/registry"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// The request path of TApps: what each of their requests passes through before k8s.io/apiserver's generic
// handlers (package requestpath says how the server finds it). In order:
//
//	tapps         registry.ApplyMark (by registry.NewREST), legacyAlias (legacyalias.go),
//	              instanceKeys (instancekeys.go), the strategic merge patch step with mergePoolPatch (patch.go)
//	tapps/status  registry.ApplyMark (by registry.NewStatusREST), instanceKeys, the same strategic merge step
//	tapps/scale   registry.ApplyMark, the strategic merge step with requestpath.StrictMerge on autoscaling/v1
//
// The size guard of package registry (clienterrors.go) wraps the stores themselves (NewREST, NewStatusREST and
// ScaleREST.Update).

// mainRequestPath is the request path of tapps, whose objects store reads.
func mainRequestPath(store requestpath.ObjectGetter) []requestpath.Step {
	return []requestpath.Step{
		legacyAlias{store: store},
		instanceKeys{},
		requestpath.StrategicMergePatch{Store: store, Merge: mergePoolPatch},
	}
}

// statusRequestPath is the request path of tapps/status; store reads whole TApps.
func statusRequestPath(store requestpath.ObjectGetter) []requestpath.Step {
	return []requestpath.Step{
		instanceKeys{},
		requestpath.StrategicMergePatch{Store: store, Merge: mergePoolPatch},
	}
}

var _ requestpath.Provider = &ScaleREST{}

// RequestPath implements requestpath.Provider for tapps/scale.
func (r *ScaleREST) RequestPath() []requestpath.Step {
	return []requestpath.Step{
		registry.ApplyMark,
		requestpath.StrategicMergePatch{Store: r, Merge: requestpath.StrictMerge, Version: autoscalingv1.SchemeGroupVersion},
	}
}
