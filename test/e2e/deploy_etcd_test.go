//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

// etcdCertSecrets runs the install step of docs/install.md, `tapp-apiserver etcd-certs`, and returns the
// Secrets it prints, by name, and its output.
func etcdCertSecrets(t *testing.T) (map[string]*corev1.Secret, []byte) {
	t.Helper()
	ctx := testContext(t, 30*time.Second)
	out, err := exec.CommandContext(ctx, os.Getenv("TAPP_E2E_SERVER_BINARY"), "etcd-certs").Output()
	if err != nil {
		t.Fatalf("tapp-apiserver etcd-certs: %v", err)
	}
	secrets := map[string]*corev1.Secret{}
	for _, doc := range regexp.MustCompile(`(?m)^---$`).Split(string(out), -1) {
		s := &corev1.Secret{}
		if err := yaml.UnmarshalStrict([]byte(doc), s); err != nil {
			t.Fatalf("tapp-apiserver etcd-certs printed something other than Secrets: %v\n%s", err, doc)
		}
		if s.Kind != "Secret" || s.Namespace != "tapp-system" {
			t.Fatalf("tapp-apiserver etcd-certs printed %s %s/%s, want Secrets in tapp-system", s.Kind, s.Namespace, s.Name)
		}
		secrets[s.Name] = s
	}
	return secrets, out
}

// deployObject reads the first object of kind from file of artifacts/deploy into obj.
func deployObject(t *testing.T, file, kind string, obj interface{}) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(deployDir(t), file))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range regexp.MustCompile(`(?m)^---.*$`).Split(string(raw), -1) {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil || meta.Kind != kind {
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no %s in %s", kind, file)
}

// secretVolumes returns the Secret of every volume of a pod template, by mount path of its first container.
func secretVolumes(template *corev1.PodTemplateSpec) map[string]string {
	byVolume := map[string]string{}
	for _, v := range template.Spec.Volumes {
		if v.Secret != nil {
			byVolume[v.Name] = v.Secret.SecretName
		}
	}
	out := map[string]string{}
	for _, m := range template.Spec.Containers[0].VolumeMounts {
		if s, ok := byVolume[m.Name]; ok {
			out[m.MountPath] = s
		}
	}
	return out
}

// TestDeployEtcdMutualTLS runs the install step that issues the bundled etcd's certificates, checks that
// the manifests mount what it prints where their flags read it, and runs three etcd members on loopback
// with the TLS flags of 10-etcd.yaml and those certificates: the members form a cluster over mutual TLS,
// the server's client certificate reads and writes, and a client without it, with another CA's or over
// plain HTTP is refused, on the client and the peer port.
func TestDeployEtcdMutualTLS(t *testing.T) {
	t.Parallel()
	secrets, out := etcdCertSecrets(t)
	members, client := secrets[etcdpki.DefaultDeployment.MembersSecret], secrets[etcdpki.DefaultDeployment.ClientSecret]
	if members == nil || client == nil || len(secrets) != 2 {
		t.Fatalf("tapp-apiserver etcd-certs printed %d Secrets, want %s and %s", len(secrets),
			etcdpki.DefaultDeployment.MembersSecret, etcdpki.DefaultDeployment.ClientSecret)
	}
	// The printed Secrets are what `kubectl apply -f -` takes.
	dryRun := mustKubectlIn(t, string(out), "apply", "--dry-run=client", "-f", "-")
	requireContains(t, "kubectl apply of the printed Secrets", dryRun, "secret/"+members.Name, "secret/"+client.Name)

	// The etcd StatefulSet: https URLs, client and peer certificate authentication, files from tapp-etcd-certs.
	var sts appsv1.StatefulSet
	deployObject(t, "10-etcd.yaml", "StatefulSet", &sts)
	args := sts.Spec.Template.Spec.Containers[0].Args
	joined := strings.Join(args, " ")
	requireContains(t, "10-etcd.yaml's etcd flags", joined, "--client-cert-auth", "--peer-client-cert-auth",
		"--listen-client-urls=https://", "--listen-peer-urls=https://", "--initial-cluster=tapp-etcd-0=https://")
	if strings.Contains(joined, "http://0.0.0.0:2379") || strings.Contains(joined, "http://0.0.0.0:2380") {
		t.Errorf("10-etcd.yaml serves plain HTTP on the client or peer port: %s", joined)
	}
	etcdMounts := secretVolumes(&sts.Spec.Template)
	pkiDir := ""
	for path, secret := range etcdMounts {
		if secret == members.Name {
			pkiDir = path
		}
	}
	if pkiDir == "" {
		t.Fatalf("10-etcd.yaml mounts no Secret %s (mounts %v)", members.Name, etcdMounts)
	}

	// The server: https members and the client certificate of tapp-apiserver-etcd-client.
	var deployment appsv1.Deployment
	deployObject(t, "20-deployment.yaml", "Deployment", &deployment)
	serverMounts := secretVolumes(&deployment.Spec.Template)
	serverArgs := strings.Join(deployment.Spec.Template.Spec.Containers[0].Args, " ")
	clientDir := ""
	for path, secret := range serverMounts {
		if secret == client.Name {
			clientDir = path
		}
	}
	if clientDir == "" {
		t.Fatalf("20-deployment.yaml mounts no Secret %s (mounts %v)", client.Name, serverMounts)
	}
	requireContains(t, "20-deployment.yaml's etcd flags", serverArgs, "--etcd-servers=https://",
		"--etcd-cafile="+clientDir+"/"+etcdpki.CAFile, "--etcd-certfile="+clientDir+"/"+corev1.TLSCertKey,
		"--etcd-keyfile="+clientDir+"/"+corev1.TLSPrivateKeyKey)

	// The members' TLS flags, reading the Secret's files from a directory of the test instead of the mount.
	dir := t.TempDir()
	pki := filepath.Join(dir, "pki")
	if err := os.Mkdir(pki, 0o700); err != nil {
		t.Fatal(err)
	}
	for key, data := range members.Data {
		if err := os.WriteFile(filepath.Join(pki, key), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var tlsFlags []string
	for _, a := range args {
		flag, _, _ := strings.Cut(a, "=")
		switch flag {
		case "--client-cert-auth", "--trusted-ca-file", "--cert-file", "--key-file", "--peer-client-cert-auth",
			"--peer-trusted-ca-file", "--peer-cert-file", "--peer-key-file", "--peer-cert-allowed-cn":
			tlsFlags = append(tlsFlags, strings.ReplaceAll(a, pkiDir+"/", pki+"/"))
		}
	}
	if len(tlsFlags) != 9 {
		t.Fatalf("10-etcd.yaml has %d of the 9 TLS flags: %q", len(tlsFlags), tlsFlags)
	}

	const n = 3
	clientURLs, peerURLs := make([]string, n), make([]string, n)
	var cluster []string
	for i := 0; i < n; i++ {
		clientURLs[i] = "https://127.0.0.1:" + strconv.Itoa(freeLoopbackPort(t))
		peerURLs[i] = "https://127.0.0.1:" + strconv.Itoa(freeLoopbackPort(t))
		cluster = append(cluster, fmt.Sprintf("m%d=%s", i, peerURLs[i]))
	}
	etcd := filepath.Join(filepath.Dir(kubectlBinary), "etcd")
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*exec.Cmd
	t.Cleanup(func() {
		cancel()
		for _, p := range procs {
			_ = p.Wait()
		}
	})
	logs := make([]*bytes.Buffer, n)
	for i := 0; i < n; i++ {
		memberArgs := append([]string{
			fmt.Sprintf("--name=m%d", i), "--data-dir=" + filepath.Join(dir, fmt.Sprintf("m%d", i)),
			"--listen-client-urls=" + clientURLs[i], "--advertise-client-urls=" + clientURLs[i],
			"--listen-peer-urls=" + peerURLs[i], "--initial-advertise-peer-urls=" + peerURLs[i],
			"--initial-cluster=" + strings.Join(cluster, ","), "--initial-cluster-state=new",
			"--initial-cluster-token=e2e-deploy", "--unsafe-no-fsync", "--log-level=warn",
		}, tlsFlags...)
		cmd := exec.CommandContext(ctx, etcd, memberArgs...)
		logs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = logs[i], logs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, l := range logs {
				t.Logf("member m%d's log:\n%s", i, l.String())
			}
		}
	})

	// The server's client certificate: the quorum over peer TLS is what lets a write through.
	writeDir := filepath.Join(dir, "client")
	if err := os.Mkdir(writeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Same layout as embeddedetcd/localcluster: etcdpki's file names.
	files := map[string][]byte{etcdpki.CAFile: client.Data[etcdpki.CAFile],
		etcdpki.ClientCertFile: client.Data[corev1.TLSCertKey], etcdpki.ClientKeyFile: client.Data[corev1.TLSPrivateKeyKey]}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(writeDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		checkEtcdRefusesStrangers(t, clientURLs[i], writeDir)
	}
	// The peer port takes the members' certificate only, not even the server's.
	serverClient := loadCert(t, filepath.Join(writeDir, etcdpki.ClientCertFile), filepath.Join(writeDir, etcdpki.ClientKeyFile))
	for i := 0; i < n; i++ {
		checkPeerRefusesStrangers(t, peerURLs[i], filepath.Join(pki, etcdpki.CAFile),
			filepath.Join(pki, etcdpki.PeerCertFile), filepath.Join(pki, etcdpki.PeerKeyFile), serverClient)
	}
}
