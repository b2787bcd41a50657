package bench

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
	tappscheme "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/scheme"
)

// protobufMagic opens every value the server stores in protobuf (the envelope of
// k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
var protobufMagic = []byte("k8s\x00")

// storedSizes reads the values of the TApps of namespace ns from tapp-apiserver's embedded etcd (a range
// read of the keys under /registry with their values) and returns the stored size of each in the form the
// server wrote (protobuf by default) and the size of the same object encoded as JSON, which is what
// --storage-media-type=application/json writes (the JSON serializer of the storage codec: compact, one
// trailing newline).
func (b *bench) storedSizes(ctx context.Context, ns string) (stored, asJSON []int, err error) {
	url, err := b.cluster.ServerEtcdURL()
	if err != nil {
		return nil, nil, err
	}
	dir := b.cluster.ServerEtcdCertDir
	tlsConfig, err := transport.TLSInfo{CertFile: filepath.Join(dir, etcdpki.ClientCertFile), KeyFile: filepath.Join(dir, etcdpki.ClientKeyFile),
		TrustedCAFile: filepath.Join(dir, etcdpki.CAFile)}.ClientConfig()
	if err != nil {
		return nil, nil, err
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, TLS: tlsConfig, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	keys, err := client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, nil, err
	}
	marker := "/tapps/" + ns + "/"
	for _, kv := range keys.Kvs {
		key := string(kv.Key)
		if !strings.Contains(key, marker) {
			continue
		}
		// Every object of the namespace lives under one prefix: read their values in one range.
		prefix := key[:strings.Index(key, marker)+len(marker)]
		resp, err := client.Get(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			return nil, nil, err
		}
		for _, kv := range resp.Kvs {
			n, err := jsonSize(kv.Value)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", kv.Key, err)
			}
			stored = append(stored, len(kv.Value))
			asJSON = append(asJSON, n)
		}
		return stored, asJSON, nil
	}
	return nil, nil, fmt.Errorf("no key containing %q in tapp-apiserver's etcd", marker)
}

// jsonSize is the size of a stored value (protobuf or JSON) encoded as the JSON storage codec writes it.
func jsonSize(value []byte) (int, error) {
	if !bytes.HasPrefix(value, protobufMagic) {
		if bytes.HasPrefix(value, []byte("{")) {
			return len(value), nil
		}
		return 0, fmt.Errorf("neither protobuf nor JSON (%d bytes)", len(value))
	}
	pb := protobuf.NewSerializer(tappscheme.Scheme, tappscheme.Scheme)
	obj, gvk, err := pb.Decode(value, nil, nil)
	if err != nil {
		return 0, err
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	var out bytes.Buffer
	if err := json.NewSerializerWithOptions(json.DefaultMetaFactory, tappscheme.Scheme, tappscheme.Scheme, json.SerializerOptions{}).Encode(obj, &out); err != nil {
		return 0, err
	}
	return out.Len(), nil
}

// newStoredBytes summarizes the stored sizes of one shape.
func newStoredBytes(shape string, stored, asJSON []int) *StoredBytes {
	s := &StoredBytes{Shape: shape, Objects: len(stored), StoredBytesPerObject: mean(stored), JSONBytesPerObject: mean(asJSON)}
	s.ProtobufToJSON = ratio(s.StoredBytesPerObject, s.JSONBytesPerObject)
	return s
}

func mean(values []int) float64 {
	if len(values) == 0 {
		return 0
	}
	sum := 0
	for _, v := range values {
		sum += v
	}
	return round(float64(sum)/float64(len(values)), 1)
}
