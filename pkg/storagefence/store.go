package storagefence

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// identityKey is the store record's key below the server's --etcd-prefix. Objects live below
// <prefix>/<group>/<resource>/, so no object can take it.
const identityKey = "storage-identity"

// Store reads and writes the store's side: the identity key and the revision of the server's etcd.
type Store struct {
	client *clientv3.Client
	// prefix is the server's --etcd-prefix, without a trailing slash.
	prefix string
	// Where describes the store in messages: the etcd servers and the prefix.
	Where string
}

// NewStore connects to the etcd of a server's storage configuration, with the same transport (servers and
// TLS files) the server's storage uses.
func NewStore(cfg storagebackend.Config) (*Store, error) {
	t := cfg.Transport
	tlsInfo := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}
	tlsConfig, err := tlsInfo.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS: %w", err)
	}
	if t.CertFile == "" && t.KeyFile == "" && t.TrustedCAFile == "" {
		tlsConfig = nil
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   t.ServerList,
		TLS:         tlsConfig,
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	prefix := strings.TrimSuffix(cfg.Prefix, "/")
	return &Store{client: client, prefix: prefix, Where: fmt.Sprintf("etcd %s, prefix %s", strings.Join(t.ServerList, ","), prefix)}, nil
}

// Close closes the etcd client.
func (s *Store) Close() error { return s.client.Close() }

func (s *Store) key() string { return s.prefix + "/" + identityKey }

// Read returns the store's record and revision. An etcd that cannot be read gives StoreUnreadable.
func (s *Store) Read(ctx context.Context) StoreRecord {
	resp, err := s.client.Get(ctx, s.key())
	if err != nil {
		return StoreRecord{State: StoreUnreadable, Err: err}
	}
	rec := StoreRecord{Revision: resp.Header.Revision}
	if len(resp.Kvs) == 1 {
		if err := json.Unmarshal(resp.Kvs[0].Value, &rec.Identity); err != nil || rec.Identity.ID == "" {
			return StoreRecord{State: StoreUnreadable, Revision: rec.Revision,
				Err: fmt.Errorf("malformed identity at %s: %q", s.key(), resp.Kvs[0].Value)}
		}
		rec.State = StoreIdentified
		return rec
	}
	count, err := s.client.Get(ctx, s.prefix+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return StoreRecord{State: StoreUnreadable, Err: err}
	}
	rec.Revision = count.Header.Revision
	rec.State = StoreEmpty
	if count.Count > 0 {
		rec.State = StoreUnidentified
	}
	return rec
}

// Identify writes id as the store's identity unless the store already has one (another replica may have
// been first); it returns the identity the store holds afterwards.
func (s *Store) Identify(ctx context.Context, id Identity) (Identity, error) {
	value, err := json.Marshal(id)
	if err != nil {
		return Identity{}, err
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.key()), "=", 0)).
		Then(clientv3.OpPut(s.key(), string(value))).
		Else(clientv3.OpGet(s.key())).
		Commit()
	if err != nil {
		return Identity{}, err
	}
	if resp.Succeeded {
		return id, nil
	}
	var stored Identity
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) != 1 || json.Unmarshal(kvs[0].Value, &stored) != nil || stored.ID == "" {
		return Identity{}, fmt.Errorf("the store's identity at %s is malformed", s.key())
	}
	return stored, nil
}

// StoredObject is what the store says of one stored object.
type StoredObject struct {
	APIVersion, Kind string
	UID              types.UID
}

// Objects lists every object stored below the prefix, stored in protobuf or (by earlier versions) in JSON.
func (s *Store) Objects(ctx context.Context) ([]StoredObject, error) {
	resp, err := s.client.Get(ctx, s.prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	var out []StoredObject
	for _, kv := range resp.Kvs {
		if string(kv.Key) == s.key() {
			continue
		}
		obj, err := DecodeStoredObject(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("cannot decode %s: %w", kv.Key, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// protobufPrefix starts every object the server stores in protobuf (k8s.io/apimachinery's envelope).
var protobufPrefix = []byte("k8s\x00")

// DecodeStoredObject reads the kind and uid of a stored object, whatever its media type: protobuf (the
// envelope runtime.Unknown around the object, whose field 1 is its ObjectMeta, as in every Kubernetes kind)
// or JSON.
func DecodeStoredObject(value []byte) (StoredObject, error) {
	if bytes.HasPrefix(value, protobufPrefix) {
		var envelope runtime.Unknown
		if err := envelope.Unmarshal(value[len(protobufPrefix):]); err != nil {
			return StoredObject{}, fmt.Errorf("protobuf envelope: %w", err)
		}
		var meta metav1.PartialObjectMetadata
		if err := meta.Unmarshal(envelope.Raw); err != nil {
			return StoredObject{}, fmt.Errorf("protobuf %s %s: %w", envelope.APIVersion, envelope.Kind, err)
		}
		return StoredObject{APIVersion: envelope.APIVersion, Kind: envelope.Kind, UID: meta.UID}, nil
	}
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(value, &obj); err != nil {
		return StoredObject{}, fmt.Errorf("neither protobuf nor JSON: %w", err)
	}
	return StoredObject{APIVersion: obj.APIVersion, Kind: obj.Kind, UID: obj.Metadata.UID}, nil
}
