package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// differentMeaning lists flags that commands define apart, each with a meaning of its own: migrate and
// migrate-storage are clients' commands, and their --kubeconfig follows kubectl's loading rules ($KUBECONFIG,
// then ~/.kube/config).
var differentMeaning = map[string]bool{"migrate --kubeconfig": true, "migrate-storage --kubeconfig": true}

// Every command has each flag once (none of its own shadows an inherited one), and a flag that several
// commands have, as the server and the storage subcommand share the store's, has one help text and one default.
func TestFlagsAreDefinedOnce(t *testing.T) {
	root := NewCommand(context.Background(), NewOptions())
	type definition struct {
		command string
		flag    *pflag.Flag
	}
	defined := map[string][]definition{}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		local := cmd.LocalFlags()
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if local.Lookup(f.Name) != nil {
				t.Errorf("%s defines --%s, which it also inherits", cmd.CommandPath(), f.Name)
			}
		})
		local.VisitAll(func(f *pflag.Flag) {
			if !differentMeaning[cmd.Name()+" --"+f.Name] {
				defined[f.Name] = append(defined[f.Name], definition{cmd.CommandPath(), f})
			}
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)

	for name, defs := range defined {
		for _, d := range defs[1:] {
			if d.flag.Usage != defs[0].flag.Usage {
				t.Errorf("--%s has two help texts:\n  %s: %s\n  %s: %s", name, defs[0].command, defs[0].flag.Usage,
					d.command, d.flag.Usage)
			}
			if d.flag.DefValue != defs[0].flag.DefValue {
				t.Errorf("--%s has two defaults: %q in %s, %q in %s", name, defs[0].flag.DefValue, defs[0].command,
					d.flag.DefValue, d.command)
			}
		}
	}
	// The store's flags are the server's and the storage subcommand's, and only the store's are the latter's.
	for _, name := range []string{"etcd-servers", "etcd-prefix", "etcd-certfile", "cert-dir", "kubeconfig",
		"embedded-etcd-data-dir", "storage-identity-configmap", "storage-check-period"} {
		commands := map[string]bool{}
		for _, d := range defined[name] {
			commands[d.command] = true
		}
		if !commands["tapp-apiserver"] || !commands["tapp-apiserver storage"] {
			t.Errorf("--%s is defined by %v, want the server and the storage subcommand", name, commands)
		}
	}
	for _, name := range []string{"enable-admission-plugins", "secure-port", "standalone", "controller-workers"} {
		for _, d := range defined[name] {
			if strings.HasPrefix(d.command, "tapp-apiserver storage") {
				t.Errorf("the storage subcommand defines the server's --%s", name)
			}
		}
	}
}

// The storage subcommand validates its flags before it opens anything, and reports every error at once.
func TestStorageValidatesBeforeOpeningTheStore(t *testing.T) {
	dir := t.TempDir()
	cmd := NewCommand(context.Background(), NewOptions())
	cmd.SetArgs([]string{"storage", "status", "--storage-identity-configmap=broken", "--storage-check-period=0s",
		"--etcd-certfile=client.crt", "--embedded-etcd-data-dir=" + filepath.Join(dir, "etcd"),
		"--cert-dir=" + filepath.Join(dir, "certs"), "--kubeconfig=" + filepath.Join(dir, "kubeconfig")})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	for _, want := range []string{"--storage-identity-configmap must be namespace/name", "--storage-check-period must be positive",
		"go with --etcd-servers"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("storage status = %v, want an error containing %q", err, want)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("storage status opened the store before validating: %s holds %v (%v)", dir, entries, err)
	}
}

func TestValidateMigrate(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "all empty", args: []string{"--apiservice-file=", "--backup-file=", "--timeout=0s"},
			want: []string{"--apiservice-file must name", "--backup-file must name", "--timeout must be positive"}},
		{name: "negative timeout", args: []string{"--apiservice-file=a.yaml", "--backup-file=b.json", "--timeout=-1m"},
			want: []string{"--timeout must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := NewMigrateCommand(context.Background())
			cmd.SetArgs(append(tt.args, "--kubeconfig="+filepath.Join(t.TempDir(), "missing")))
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("migrate %q = %v, want an error containing %q", tt.args, err, want)
				}
			}
			// The kubeconfig is never read: a missing one would be the error otherwise.
			if err != nil && strings.Contains(err.Error(), "missing") {
				t.Errorf("migrate read its kubeconfig before validating its flags: %v", err)
			}
		})
	}
}
