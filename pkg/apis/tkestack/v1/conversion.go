package v1

import (
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// Convert_v1_TAppSpec_To_tkestack_TAppSpec gives the internal spec a template of its own: a copy of the
// versioned one's (sharing its maps and slices), never a pointer into the versioned object, which would keep
// the whole decoded object alive for as long as the internal one lives.
func Convert_v1_TAppSpec_To_tkestack_TAppSpec(in *TAppSpec, out *tkestack.TAppSpec, s conversion.Scope) error {
	if err := autoConvert_v1_TAppSpec_To_tkestack_TAppSpec(in, out, s); err != nil {
		return err
	}
	template := in.Template
	out.Template = &template
	return nil
}

// Convert_tkestack_TAppSpec_To_v1_TAppSpec writes the internal template, or an empty one for nil.
func Convert_tkestack_TAppSpec_To_v1_TAppSpec(in *tkestack.TAppSpec, out *TAppSpec, s conversion.Scope) error {
	if err := autoConvert_tkestack_TAppSpec_To_v1_TAppSpec(in, out, s); err != nil {
		return err
	}
	out.Template = *in.PodTemplate()
	return nil
}
