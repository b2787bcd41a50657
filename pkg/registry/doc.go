// Package registry holds the pieces every resource's REST storage shares; the resources themselves live in
// one folder each: tkestack/tapp (TApps), openyurt/yurtappdaemon and openyurt/nodepool.
//
// A resource's folder holds everything its requests go through, each registered from there: its strategy
// (strategy.go: defaulting on write, validation, warnings, reset fields), its storage (storage.go: the
// generic store, the main resource and its subresources built on the pieces below, the table printer) and
// its request path, the steps its requests pass before k8s.io/apiserver's generic handlers, declared by
// passing them to NewREST and NewStatusREST (or by a RequestPath method of the folder's own storage, as
// tapps/scale has). TApps declare theirs in tkestack/tapp/requestpath.go: the DefaultTemplateName alias
// folding (legacyalias.go), the instance-key checks (instancekeys.go) and the strategic merge patch step
// with the templatePool merge (patch.go, strategicmerge.go); YurtAppDaemons and NodePools the strategic
// merge patch step with requestpath.StrictMerge, in their storage.go. pkg/apiserver finds every request path
// while walking the storage map of the groups it installs (see package requestpath).
//
// The shared pieces:
//
//   - rest.go: REST, the generic store with short names and categories for discovery, the size guard around
//     create, update and watch, and a request path (ApplyMark, then the resource's steps);
//   - status.go: StatusREST, the status subresource through a copy of the main store with the status
//     strategy, with the same size guard and request path;
//   - clienterrors.go: the size guard, checks of the client's mistakes that the generic store would answer
//     500 (a resourceVersion on create or not a number, an object larger than etcd takes, counting
//     managedFields for server-side apply, an apply body the schema refuses), answered 4xx with the field;
//     SizeCheckedUpdateValidation and CheckedObjectInfo give them to storage that updates a store itself (the
//     scale subresource);
//   - replacedfields.go: the object an update replaces, handed to the field manager without its
//     managedFields when the request brings its own and no mutating webhook or policy reads them
//     (WithReplacedManagedFieldsUnread marks those PUTs; the size guard's CheckedObjectInfo acts on them);
//   - applymark.go: ApplyMark, the request-path half of the size guard: it marks server-side apply requests
//     (WithServerSideApply) so that the guard counts their managedFields;
//   - table.go: TableConvertor, the table printer behind kubectl get, and its helpers;
//   - selection.go: label and field selection (ObjectMetaAttrs, Matcher) and the reset field sets of the
//     strategies (StatusResetFields, SpecResetFields);
//   - requestpath/: the mechanics every request path shares (steps, the table pkg/apiserver builds, body
//     reading and forwarding, the strategic merge patch step and its retry on conflicts, MergeWithStruct).
package registry
