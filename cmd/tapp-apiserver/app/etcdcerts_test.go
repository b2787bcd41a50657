package app

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestEtcdCertsPrintsTwoSecrets(t *testing.T) {
	cmd := NewEtcdCertsCommand(context.Background())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--namespace=other", "--members=5"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, doc := range regexp.MustCompile(`(?m)^---$`).Split(out.String(), -1) {
		var s corev1.Secret
		if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if s.Kind != "Secret" || s.APIVersion != "v1" || s.Namespace != "other" || len(s.Data) == 0 {
			t.Errorf("printed %s %s %s/%s with %d keys, want a Secret in namespace other", s.APIVersion, s.Kind, s.Namespace, s.Name, len(s.Data))
		}
		names = append(names, s.Name)
	}
	if len(names) != 2 || names[0] != "tapp-etcd-certs" || names[1] != "tapp-apiserver-etcd-client" {
		t.Errorf("printed Secrets %q, want tapp-etcd-certs and tapp-apiserver-etcd-client", names)
	}

	bad := NewEtcdCertsCommand(context.Background())
	bad.SetOut(&bytes.Buffer{})
	bad.SetErr(&bytes.Buffer{})
	bad.SetArgs([]string{"--members=0"})
	if err := bad.Execute(); err == nil {
		t.Error("etcd-certs --members=0 succeeded")
	}
}
