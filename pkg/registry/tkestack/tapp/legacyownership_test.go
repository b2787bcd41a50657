package tapp

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func TestDropLegacyOwnership(t *testing.T) {
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	tapp := &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		entry("creator", `{"f:spec":{"f:defaultTemplateName":{},"f:replicas":{}}}`),
		entry("jsonpatch", `{"f:spec":{"f:DefaultTemplateName":{}}}`),
		entry("mixed", `{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:DefaultTemplateName":{},"f:serviceName":{}}}`),
		entry("annotation", `{"f:metadata":{"f:annotations":{"f:note":{}}}}`),
		{Manager: "nil", Operation: metav1.ManagedFieldsOperationUpdate},
	}}}
	dropLegacyOwnership(tapp)
	var managers []string
	for _, m := range tapp.ManagedFields {
		managers = append(managers, m.Manager)
		if m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), `"f:DefaultTemplateName"`) {
			t.Errorf("%s still owns the alias: %s", m.Manager, m.FieldsV1.Raw)
		}
	}
	if strings.Join(managers, ",") != "creator,mixed,annotation,nil" {
		t.Errorf("managers = %v, want creator,mixed,annotation,nil (the entry owning only the alias dropped)", managers)
	}
	if got := string(tapp.ManagedFields[0].FieldsV1.Raw); got != `{"f:spec":{"f:defaultTemplateName":{},"f:replicas":{}}}` {
		t.Errorf("an entry without the alias changed: %s", got)
	}
	if got := string(tapp.ManagedFields[1].FieldsV1.Raw); got != `{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:serviceName":{}}}` {
		t.Errorf("mixed entry = %s, want the alias gone and the rest kept", got)
	}

	// Nothing to drop: the slice is left as it is.
	clean := &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{entry("creator", `{"f:spec":{"f:defaultTemplateName":{}}}`)}}}
	before := &clean.ManagedFields[0]
	dropLegacyOwnership(clean)
	if len(clean.ManagedFields) != 1 || &clean.ManagedFields[0] != before {
		t.Errorf("managedFields without the alias were rebuilt: %+v", clean.ManagedFields)
	}
}
