package storagefence

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	made := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ours := Identity{ID: "ours", Created: made}
	other := Identity{ID: "other", Created: made.Add(time.Hour)}
	recorded := func(mark int64) ClusterRecord {
		return ClusterRecord{State: ClusterPresent, Identity: ours, HighWater: mark}
	}
	identified := func(id Identity, rev int64) StoreRecord {
		return StoreRecord{State: StoreIdentified, Identity: id, Revision: rev}
	}
	tests := []struct {
		name       string
		cluster    ClusterRecord
		store      StoreRecord
		want       Action
		wantReason string
		// wantIn are substrings the message must hold (what is wrong, what to do).
		wantIn []string
	}{
		{name: "no record, empty store: a new installation",
			cluster: ClusterRecord{State: ClusterAbsent}, store: StoreRecord{State: StoreEmpty, Revision: 1},
			want: Initialise},
		{name: "no record, store without identity: an installation from before identities",
			cluster: ClusterRecord{State: ClusterAbsent}, store: StoreRecord{State: StoreUnidentified, Revision: 50},
			want: Initialise},
		{name: "no record, identified store: the record is recorded again",
			cluster: ClusterRecord{State: ClusterAbsent}, store: identified(ours, 50),
			want: Record},
		{name: "same identity, revision above the mark",
			cluster: recorded(40), store: identified(ours, 50), want: Serve},
		{name: "same identity, revision at the mark",
			cluster: recorded(50), store: identified(ours, 50), want: Serve},
		{name: "empty store: lost, or flags point to a fresh etcd",
			cluster: recorded(50), store: StoreRecord{State: StoreEmpty, Revision: 1},
			want: Refuse, wantReason: ReasonEmptyStore, wantIn: []string{"empty", "ours", "storage accept --confirm"}},
		{name: "store holding objects but no identity",
			cluster: recorded(50), store: StoreRecord{State: StoreUnidentified, Revision: 900},
			want: Refuse, wantReason: ReasonUnidentifiedStore, wantIn: []string{"no identity", "ours"}},
		{name: "other identity: another installation's store",
			cluster: recorded(50), store: identified(other, 900),
			want: Refuse, wantReason: ReasonOtherStore, wantIn: []string{"other", "ours", "--etcd-servers"}},
		{name: "rewound: restored from an older snapshot without bumping the revision",
			cluster: recorded(50), store: identified(ours, 49),
			want: Refuse, wantReason: ReasonRewoundStore, wantIn: []string{"49", "50", "--bump-revision"}},
		{name: "record unreadable: wait, do not guess",
			cluster: ClusterRecord{State: ClusterUnreadable, Err: errors.New("connection refused")},
			store:   StoreRecord{State: StoreEmpty, Revision: 1},
			want:    Wait, wantReason: ReasonClusterUnreadable, wantIn: []string{"connection refused"}},
		{name: "record unreadable with the right store: still wait",
			cluster: ClusterRecord{State: ClusterUnreadable, Err: errors.New("forbidden")},
			store:   identified(ours, 50),
			want:    Wait, wantReason: ReasonClusterUnreadable},
		{name: "store unreadable",
			cluster: recorded(50), store: StoreRecord{State: StoreUnreadable, Err: errors.New("etcd down")},
			want: Wait, wantReason: ReasonStoreUnreadable, wantIn: []string{"etcd down"}},
		{name: "store unreadable and no record: no initialising",
			cluster: ClusterRecord{State: ClusterAbsent}, store: StoreRecord{State: StoreUnreadable, Err: errors.New("etcd down")},
			want: Wait, wantReason: ReasonStoreUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.cluster, tt.store)
			if got.Action != tt.want || got.Reason != tt.wantReason {
				t.Fatalf("Decide = %s/%q (%s), want %s/%q", got.Action, got.Reason, got.Message, tt.want, tt.wantReason)
			}
			if (got.Action == Refuse || got.Action == Wait) && got.Message == "" {
				t.Errorf("a %s verdict without a message", got.Action)
			}
			for _, sub := range tt.wantIn {
				if !strings.Contains(got.Message, sub) {
					t.Errorf("message %q does not mention %q", got.Message, sub)
				}
			}
		})
	}
}
