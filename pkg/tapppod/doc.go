// Package tapppod builds the pod of a TApp instance from its pod template: the one definition of that pod,
// shared by the TApp controller (pkg/controller/tapp/policy), which creates it, and the
// TAppPodTemplateDryRun admission plugin (pkg/admission/podtemplate), which has the core API judge it before
// the TApp is stored.
//
// It works on the pod template and a few facts of the TApp (Owner), not on a TApp object, so it serves the
// versioned TApp of the controller and the internal TApp of admission alike. It also owns what that pod
// carries: the instance and hash labels (TemplateHash, UniqHash) and the record of the keys that came from
// the template (TemplateKeysAnnotation). Prepare computes these once for a template, so that the pods of
// many instances (Template.New) are built without hashing it again.
package tapppod
