// Package storagefence keeps tapp-apiserver from serving a store that is not the cluster's: a lost,
// replaced or rewound etcd would answer 404 for TApps and YurtAppDaemons whose pods, claims and
// Deployments still run, and the cluster's garbage collector would delete them.
//
// The server records an identity (a random id and when it was made) in its store, under its etcd prefix,
// and in the cluster, in a ConfigMap kept by kube-apiserver that also holds a high-water mark of the store's
// revision. Decide compares the two records (a pure function); Fence reads them on start and periodically,
// writes them, moves the mark forward, and while the verdict is not to serve fails readiness, answers 503
// to requests for the served groups, keeps the controllers stopped and says why (Event and log).
package storagefence

import (
	"fmt"
	"time"
)

// Identity names one store: a random id, and when the server made it.
type Identity struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
}

func (i Identity) String() string {
	return fmt.Sprintf("%s (created %s)", i.ID, i.Created.UTC().Format(time.RFC3339))
}

// ClusterState is what the cluster's record holds.
type ClusterState string

const (
	// ClusterAbsent: the cluster has no record (a new installation, or one from before identities).
	ClusterAbsent ClusterState = "Absent"
	// ClusterPresent: the record holds an identity and a high-water mark.
	ClusterPresent ClusterState = "Present"
	// ClusterUnreadable: kube-apiserver could not be read, or the record is malformed.
	ClusterUnreadable ClusterState = "Unreadable"
)

// ClusterRecord is the cluster's side.
type ClusterRecord struct {
	State    ClusterState
	Identity Identity
	// HighWater is the highest store revision a serving replica has seen.
	HighWater int64
	// Err says why the record is unreadable.
	Err error
}

// StoreState is what the store holds.
type StoreState string

const (
	// StoreEmpty: nothing under the server's prefix.
	StoreEmpty StoreState = "Empty"
	// StoreIdentified: the store holds an identity.
	StoreIdentified StoreState = "Identified"
	// StoreUnidentified: the store holds objects but no identity (written by a version without identities,
	// or by someone else).
	StoreUnidentified StoreState = "Unidentified"
	// StoreUnreadable: etcd could not be read, or the identity is malformed.
	StoreUnreadable StoreState = "Unreadable"
)

// StoreRecord is the store's side.
type StoreRecord struct {
	State    StoreState
	Identity Identity
	// Revision is the store's current revision (etcd's header revision).
	Revision int64
	// Err says why the store is unreadable.
	Err error
}

// Action is what the server does with a verdict.
type Action string

const (
	// Serve: the store is the cluster's; serve it and move the mark forward.
	Serve Action = "Serve"
	// Initialise: make a new identity, write it to the store, then record it in the cluster; then serve.
	Initialise Action = "Initialise"
	// Record: record the store's identity in the cluster (which has none); then serve.
	Record Action = "Record"
	// Refuse: the store is not the cluster's; do not serve until it is, or until an operator accepts it.
	Refuse Action = "Refuse"
	// Wait: one side cannot be read; do not guess, keep the current state and check again.
	Wait Action = "Wait"
)

// Reasons of Refuse and Wait verdicts (also the reasons of the Events).
const (
	ReasonEmptyStore        = "StoreEmpty"
	ReasonUnidentifiedStore = "StoreUnidentified"
	ReasonOtherStore        = "StoreOfAnotherIdentity"
	ReasonRewoundStore      = "StoreRewound"
	ReasonClusterUnreadable = "ClusterRecordUnreadable"
	ReasonStoreUnreadable   = "StoreUnreadable"
)

// Verdict is the outcome of Decide.
type Verdict struct {
	Action Action
	// Reason and Message say why, for Refuse and Wait.
	Reason  string
	Message string
}

// acceptHint is what an operator does when the store is right after all.
const acceptHint = "If the objects are really gone or the store was restored on purpose, run `tapp-apiserver storage " +
	"accept --confirm` (the garbage collector then deletes the workloads whose TApps and YurtAppDaemons the " +
	"store lacks). Nothing is deleted until then."

// Decide compares the cluster's record with the store's. It never serves a store that contradicts a
// record, and never decides while either side is unreadable.
func Decide(cluster ClusterRecord, store StoreRecord) Verdict {
	switch {
	case cluster.State == ClusterUnreadable:
		return Verdict{Action: Wait, Reason: ReasonClusterUnreadable, Message: fmt.Sprintf(
			"cannot read the cluster's storage identity record (%v); not deciding whether this store is the cluster's until it can be read", cluster.Err)}
	case store.State == StoreUnreadable:
		return Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: fmt.Sprintf(
			"cannot read the store's identity (%v); checking again", store.Err)}
	case cluster.State == ClusterAbsent && store.State == StoreIdentified:
		return Verdict{Action: Record}
	case cluster.State == ClusterAbsent:
		// Empty store of a new installation, or the store of an installation from before identities.
		return Verdict{Action: Initialise}
	}
	// The cluster holds a record.
	switch store.State {
	case StoreEmpty:
		return Verdict{Action: Refuse, Reason: ReasonEmptyStore, Message: fmt.Sprintf(
			"the store is empty, but the cluster's record says this server's objects are in store %s: it was lost, "+
				"or --etcd-servers/--etcd-prefix point to another etcd. Serving it would make the garbage collector "+
				"delete every pod, Deployment and StatefulSet the missing TApps and YurtAppDaemons own. Point the server "+
				"at the right store or restore it. %s", cluster.Identity, acceptHint)}
	case StoreUnidentified:
		return Verdict{Action: Refuse, Reason: ReasonUnidentifiedStore, Message: fmt.Sprintf(
			"the store holds objects but no identity, while the cluster's record says this server's objects are in "+
				"store %s: it is another store (or a backup from before identities). Point the server at the right "+
				"store or restore it. %s", cluster.Identity, acceptHint)}
	}
	if store.Identity.ID != cluster.Identity.ID {
		return Verdict{Action: Refuse, Reason: ReasonOtherStore, Message: fmt.Sprintf(
			"the store is %s, but the cluster's record says this server's objects are in store %s: "+
				"--etcd-servers or --etcd-prefix point to another installation's store. Point the server at the "+
				"right store. %s", store.Identity, cluster.Identity, acceptHint)}
	}
	if store.Revision < cluster.HighWater {
		return Verdict{Action: Refuse, Reason: ReasonRewoundStore, Message: fmt.Sprintf(
			"the store's revision %d is below %d, the highest this cluster has seen it serve: it was restored from an "+
				"older snapshot without bumping its revision, and objects created since would answer 404. Restore "+
				"with `etcdutl snapshot restore --bump-revision --mark-compacted` past the mark (docs/storage.md). %s",
			store.Revision, cluster.HighWater, acceptHint)}
	}
	return Verdict{Action: Serve}
}
