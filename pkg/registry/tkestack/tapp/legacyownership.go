package tapp

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// legacyOwnershipKey is how managedFields name the capitalised alias of spec.defaultTemplateName.
var legacyOwnershipKey = []byte(`"f:DefaultTemplateName"`)

var (
	legacyOwnershipPath = fieldpath.MakePathOrDie("spec", "DefaultTemplateName")
	// legacyOwnership is the field set of the alias.
	legacyOwnership = fieldpath.NewSet(legacyOwnershipPath)
)

// dropLegacyOwnership removes spec.DefaultTemplateName from the managedFields of tapp. The API folds the alias
// into defaultTemplateName before field management sees a request, so no write records it any more; objects
// written before that may still carry it (a JSON patch of /spec/DefaultTemplateName recorded ownership of a
// field that is never stored), and lose it on their next update. An entry that owned nothing else is dropped.
func dropLegacyOwnership(tapp *tkestack.TApp) {
	var out []metav1.ManagedFieldsEntry
	changed := false
	for i, entry := range tapp.ManagedFields {
		if entry.FieldsV1 == nil || !bytes.Contains(entry.FieldsV1.Raw, legacyOwnershipKey) {
			if changed {
				out = append(out, entry)
			}
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(entry.FieldsV1.Raw)); err != nil || !set.Has(legacyOwnershipPath) {
			if changed {
				out = append(out, entry)
			}
			continue
		}
		pruned := set.Difference(legacyOwnership)
		raw, err := pruned.ToJSON()
		if err != nil {
			if changed {
				out = append(out, entry)
			}
			continue
		}
		if !changed {
			out = append(make([]metav1.ManagedFieldsEntry, 0, len(tapp.ManagedFields)), tapp.ManagedFields[:i]...)
			changed = true
		}
		if pruned.Empty() {
			continue
		}
		entry.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		out = append(out, entry)
	}
	if changed {
		tapp.ManagedFields = out
	}
}
