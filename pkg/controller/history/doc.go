// Package history owns the ControllerRevision bookkeeping the embedded controllers share, in the manner of
// Kubernetes' controller history: the revision hash of an owner's data, moved on by status.collisionCount
// (Hash), the revision name as a label value (Name), the revisions an owner controls (Store.Owned, Newest),
// creating the revision of the owner's current data, or reusing and renumbering as the newest an equal one,
// with hash collision handling (Store.Ensure, SameData), and deleting the oldest revisions beyond a history
// limit (Store.Prune), and the revision object itself with its owner and hash labels (NewControllerRevision).
//
// What each revision holds, how a long owner name is cut and which revisions are still in use stay with each
// controller and its policy.
package history
