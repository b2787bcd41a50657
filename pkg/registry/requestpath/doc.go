// Package requestpath is the part of a request's handling that runs before k8s.io/apiserver's generic
// handlers, declared by each resource's own storage.
//
// A storage that must see its requests before the generic create, update or patch handler implements
// Provider: RequestPath lists its Steps, outermost first. The server (pkg/apiserver) walks the storage map of
// every API group it installs, builds one Table from the Providers it finds there, and puts Table.Handler
// innermost in its handler chain (after authentication, authorization and the storage fence): a request for a
// group, version, resource and subresource whose storage has steps passes through them, then reaches the
// generic handler, so admission, managedFields, dry-run and field validation stay upstream's; every other
// request goes straight to the generic handler.
//
// What a step does for one resource lives in that resource's folder under pkg/registry (for instance
// pkg/registry/tkestack/tapp/requestpath.go). This package holds only what steps share, none of it specific to a
// resource:
//
//   - table.go: Step, Env (the scheme, codecs and body limit the server gives every step), Provider and Table;
//   - body.go: reading a body within the limit and giving it back, forwarding a rewritten body, the media type;
//   - patch.go: StrategicMergePatch, the step in front of strategic merge patches: it reads the stored object,
//     lets the resource's MergeFunc judge or rewrite the patch (StrictMerge: upstream's merge, whose refusals it
//     answers 400 or 422 instead of 500), forwards it, and recomputes a rewritten patch that lost a race (409);
//   - merge.go: MergeWithStruct, upstream's strategic merge with its panics returned as errors.
package requestpath
