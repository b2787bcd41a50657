package etcdpki

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deployment names the etcd of artifacts/deploy: a StatefulSet whose members are
// <StatefulSet>-<i>.<Service>.<Namespace>.svc, and the Secrets its certificates go into.
type Deployment struct {
	Namespace string
	// StatefulSet and Service (headless) give the members their names; ClientService is the Service in
	// front of all members.
	StatefulSet, Service, ClientService string
	Members                             int
	// MembersSecret holds ca.crt and the members' serving and peer certificates and keys; ClientSecret
	// (type kubernetes.io/tls) holds ca.crt and the server's client certificate as tls.crt and tls.key.
	MembersSecret, ClientSecret string
}

// DefaultDeployment is the etcd of artifacts/deploy (10-etcd.yaml and 20-deployment.yaml).
var DefaultDeployment = Deployment{
	Namespace:     "tapp-system",
	StatefulSet:   "tapp-etcd",
	Service:       "tapp-etcd",
	ClientService: "tapp-etcd-client",
	Members:       3,
	MembersSecret: "tapp-etcd-certs",
	ClientSecret:  "tapp-apiserver-etcd-client",
}

// Hosts are the names the members' serving and peer certificates are valid for: every member's name, a
// wildcard for the headless Service (members added later), the client Service, and loopback (etcdctl in a
// member's container, port-forwards).
func (d Deployment) Hosts() []string {
	var hosts []string
	for i := 0; i < d.Members; i++ {
		hosts = append(hosts, fmt.Sprintf("%s-%d.%s.%s.svc", d.StatefulSet, i, d.Service, d.Namespace))
	}
	return append(hosts,
		fmt.Sprintf("*.%s.%s.svc", d.Service, d.Namespace),
		fmt.Sprintf("%s.%s.svc", d.ClientService, d.Namespace),
		"localhost", "127.0.0.1")
}

// Secrets issues a new bundle for the deployment and returns its two Secrets.
func (d Deployment) Secrets(validity time.Duration) ([]*corev1.Secret, error) {
	if d.Members < 1 {
		return nil, fmt.Errorf("an etcd needs at least one member, not %d", d.Members)
	}
	b, err := Issue(d.StatefulSet, d.Hosts(), validity)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app.kubernetes.io/part-of": "tapp-apiserver"}
	secret := func(name, component string, t corev1.SecretType, data map[string][]byte) *corev1.Secret {
		l := map[string]string{"app.kubernetes.io/name": component}
		for k, v := range labels {
			l[k] = v
		}
		return &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: l},
			Type:       t,
			Data:       data,
		}
	}
	return []*corev1.Secret{
		secret(d.MembersSecret, d.StatefulSet, corev1.SecretTypeOpaque, map[string][]byte{
			CAFile:         b.CA,
			ServerCertFile: b.ServerCert, ServerKeyFile: b.ServerKey,
			PeerCertFile: b.PeerCert, PeerKeyFile: b.PeerKey,
		}),
		secret(d.ClientSecret, "tapp-apiserver", corev1.SecretTypeTLS, map[string][]byte{
			CAFile:                  b.CA,
			corev1.TLSCertKey:       b.ClientCert,
			corev1.TLSPrivateKeyKey: b.ClientKey,
		}),
	}, nil
}
