// Package fuzzer holds the fuzz functions for round-trip tests of the apps.openyurt.io group. They keep
// fuzzed internal objects fixed points of defaulting, because decoding defaults and the round trip compares
// the decoded object with the original.
package fuzzer

import (
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	podtemplatefuzzer "github.com/tapp-io/tapp-apiserver/pkg/apis/podtemplate/fuzzer"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// Funcs returns the fuzz functions of the group.
var Funcs = func(codecs runtimeserializer.CodecFactory) []interface{} {
	return append([]interface{}{
		func(spec *openyurt.YurtAppDaemonSpec, c randfill.Continue) {
			c.FillNoCustom(spec)
			if spec.RevisionHistoryLimit == nil {
				limit := int32(openyurt.DefaultRevisionHistoryLimit)
				spec.RevisionHistoryLimit = &limit
			}
			// Defaulting copies spec.selector into a template without a selector.
			if t := spec.WorkloadTemplate.DeploymentTemplate; t != nil && t.Spec.Selector == nil && spec.Selector != nil {
				t.Spec.Selector = spec.Selector.DeepCopy()
			}
			if t := spec.WorkloadTemplate.StatefulSetTemplate; t != nil && t.Spec.Selector == nil && spec.Selector != nil {
				t.Spec.Selector = spec.Selector.DeepCopy()
			}
		},
		func(spec *openyurt.YurtAppSetSpec, c randfill.Continue) {
			c.FillNoCustom(spec)
			if spec.RevisionHistoryLimit == nil {
				limit := int32(openyurt.DefaultRevisionHistoryLimit)
				spec.RevisionHistoryLimit = &limit
			}
		},
		func(p *openyurt.Patch, c randfill.Continue) {
			c.FillNoCustom(p)
			// A value is JSON: fuzzed bytes would not survive encoding. Write it in the form the
			// JSON encoder writes it back (HTML characters escaped), so the round trip compares like with like.
			if p.Value != nil {
				raw, err := json.Marshal(c.String(0))
				if err != nil {
					panic(err)
				}
				p.Value = &apiextensionsv1.JSON{Raw: raw}
			}
		},
		func(spec *openyurt.NodePoolSpec, c randfill.Continue) {
			c.FillNoCustom(spec)
			if spec.Type == "" {
				spec.Type = openyurt.Edge
			}
			// Decoding v1beta2 defaults the leader fields; the older versions read them so.
			openyurt.SetLeaderDefaults(spec)
		},
	}, podtemplatefuzzer.Funcs()...)
}
