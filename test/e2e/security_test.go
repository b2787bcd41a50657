//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecurity checks authentication and authorization of the TApp API, through the aggregator and
// directly at tapp-apiserver.
func TestSecurity(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "security")
	mustKubectlIn(t, webTApp, "apply", "-n", ns, "-f", "-")

	t.Run("user without RBAC is forbidden", func(t *testing.T) {
		_, err := kubectlAs(t, "bob", "get", "tapps", "-n", ns)
		if err == nil {
			t.Fatal("bob, who has no RBAC, listed tapps")
		}
		requireContains(t, "kubectl --as=bob get tapps", err.Error(), "Forbidden",
			`User "bob" cannot list resource "tapps" in API group "apps.tkestack.io" in the namespace "`+ns+`"`)
		_, err = kubectlAs(t, "bob", "get", "--raw", "/apis/apps.tkestack.io/v1/namespaces/"+ns+"/tapps")
		if err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("bob's raw GET: err = %v, want Forbidden (403)", err)
		}
	})

	t.Run("RBAC grant is honoured through delegated authorization", func(t *testing.T) {
		mustKubectl(t, "create", "role", "tapp-reader", "-n", ns, "--verb=get,list", "--resource=tapps.apps.tkestack.io")
		mustKubectl(t, "create", "rolebinding", "bob-reads-tapps", "-n", ns, "--role=tapp-reader", "--user=bob")
		// RBAC changes reach kube-apiserver's authorizer (and tapp-apiserver's delegated one) within seconds.
		eventually(t, 30*time.Second, "bob lists tapps", func() error {
			out, err := kubectlAs(t, "bob", "get", "tapps", "-n", ns, "-o", "name")
			if err != nil {
				return err
			}
			if out != "tapp.apps.tkestack.io/web\n" {
				return fmt.Errorf("bob's list = %q", out)
			}
			return nil
		})
		// get and list only: no delete, no writes, no other namespace.
		if _, err := kubectlAs(t, "bob", "delete", "tapp", "web", "-n", ns); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("bob deleting a TApp: err = %v, want Forbidden", err)
		}
		if _, err := kubectlAs(t, "bob", "scale", "tapp", "web", "-n", ns, "--replicas=4"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("bob scaling a TApp: err = %v, want Forbidden", err)
		}
		if _, err := kubectlAs(t, "bob", "get", "tapps", "-n", "default"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("bob listing tapps in default: err = %v, want Forbidden", err)
		}
	})

	t.Run("groups reach the delegated authorizer", func(t *testing.T) {
		// carol is allowed only through her group: kube-apiserver and then tapp-apiserver (from the
		// aggregator's X-Remote-Group) must both see it.
		mustKubectl(t, "create", "rolebinding", "tapp-readers-group", "-n", ns, "--role=tapp-reader", "--group=e2e-tapp-readers")
		eventually(t, 30*time.Second, "carol lists tapps through her group", func() error {
			out, err := kubectlAs(t, "carol", "--as-group=e2e-tapp-readers", "get", "tapps", "-n", ns, "-o", "name")
			if err != nil {
				return err
			}
			if out != "tapp.apps.tkestack.io/web\n" {
				return fmt.Errorf("carol's list = %q", out)
			}
			return nil
		})
		if _, err := kubectlAs(t, "carol", "get", "tapps", "-n", ns); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("carol without the group: err = %v, want Forbidden", err)
		}
	})

	pki := filepath.Join(filepath.Dir(cluster.Kubeconfig), "pki")
	tappPath := "/apis/apps.tkestack.io/v1/namespaces/default/tapps"

	t.Run("direct request with spoofed identity headers and no client certificate", func(t *testing.T) {
		code, body := directGet(t, nil, cluster.ServerURL+tappPath, map[string]string{
			"X-Remote-User": "admin", "X-Remote-Group": "system:masters",
		})
		if code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Fatalf("spoofed X-Remote-User without a front-proxy certificate: status %d, want 401 or 403; body: %s", code, body)
		}
		if code == http.StatusForbidden && !strings.Contains(body, `User \"system:anonymous\"`) {
			t.Errorf("a 403 for someone other than system:anonymous: %s", body)
		}
		if strings.Contains(body, `User \"admin\"`) || strings.Contains(body, "TAppList") {
			t.Errorf("the request was treated as admin: %s", body)
		}
	})

	t.Run("direct request with spoofed headers and a client certificate not signed by the front-proxy CA", func(t *testing.T) {
		// tapp-apiserver's own client certificate is signed by the cluster's client CA: it authenticates
		// the user tapp-apiserver, whose headers must not be trusted as a front proxy's.
		cert := loadCert(t, filepath.Join(pki, "tapp-apiserver-client.crt"), filepath.Join(pki, "tapp-apiserver-client.key"))
		code, body := directGet(t, &cert, cluster.ServerURL+tappPath, map[string]string{
			"X-Remote-User": "admin", "X-Remote-Group": "system:masters",
		})
		if code != http.StatusForbidden {
			t.Fatalf("status %d, want 403; body: %s", code, body)
		}
		requireContains(t, "the 403 body", body, `User \"tapp-apiserver\"`)
	})

	t.Run("direct request from the front proxy is authorized as the proxied user", func(t *testing.T) {
		// The control for the two above: the aggregator's own certificate makes the headers count.
		cert := loadCert(t, filepath.Join(pki, "front-proxy-client.crt"), filepath.Join(pki, "front-proxy-client.key"))
		code, body := directGet(t, &cert, cluster.ServerURL+"/apis/apps.tkestack.io/v1/namespaces/"+ns+"/tapps", map[string]string{
			"X-Remote-User": "admin", "X-Remote-Group": "system:masters",
		})
		if code != http.StatusOK || !strings.Contains(body, `"kind":"TAppList"`) || !strings.Contains(body, `"name":"web"`) {
			t.Fatalf("status %d, want 200 with the TAppList; body: %s", code, body)
		}
		code, body = directGet(t, &cert, cluster.ServerURL+tappPath, map[string]string{"X-Remote-User": "bob"})
		if code != http.StatusForbidden {
			t.Errorf("front proxy for bob: status %d, want 403; body: %s", code, body)
		}
	})

	t.Run("anonymous request through kube-apiserver", func(t *testing.T) {
		code, body := httpGet(t, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: caPoolFromPEM(t, cluster.AdminConfig.TLSClientConfig.CAData)}},
			cluster.AdminConfig.Host+tappPath, nil)
		if code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Fatalf("anonymous list of tapps: status %d, want 401 or 403; body: %s", code, body)
		}
		if strings.Contains(body, "TAppList") {
			t.Errorf("anonymous request got the list: %s", body)
		}
	})
}

// directGet sends a GET straight to tapp-apiserver, trusting its serving CA, with an optional client
// certificate and extra headers.
func directGet(t *testing.T, cert *tls.Certificate, url string, headers map[string]string) (int, string) {
	t.Helper()
	cfg := &tls.Config{RootCAs: caPool(t, cluster.ServerCAFile)}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return httpGet(t, &http.Transport{TLSClientConfig: cfg}, url, headers)
}

func httpGet(t *testing.T, transport *http.Transport, url string, headers map[string]string) (int, string) {
	t.Helper()
	defer transport.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: transport, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func caPool(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return caPoolFromPEM(t, data)
}

// caPoolFromPEM is a pool of the PEM certificates in data (the admin kubeconfig embeds its CA).
func caPoolFromPEM(t *testing.T, data []byte) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatal("no PEM certificate")
	}
	return pool
}

func loadCert(t *testing.T, certFile, keyFile string) tls.Certificate {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
