package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

// newStorageFence builds the fence of a server in cluster mode: its store through the server's storage
// configuration, the record through kubeConfig, Events in the record's namespace.
func newStorageFence(ctx context.Context, s *StoreOptions, kubeConfig *rest.Config) (*storagefence.Fence, func(), error) {
	store, err := storagefence.NewStore(s.Etcd.StorageConfig)
	if err != nil {
		return nil, nil, err
	}
	config := rest.CopyConfig(kubeConfig)
	config.UserAgent = "tapp-apiserver-storage-fence"
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		_ = store.Close()
		return nil, nil, err
	}
	host, _ := os.Hostname()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: "tapp-apiserver", Host: host})
	fence := storagefence.New(store, &storagefence.Cluster{Client: kube, Name: s.Record.Value()}, recorder, s.CheckPeriod)
	return fence, func() {
		broadcaster.Shutdown()
		_ = store.Close()
	}, nil
}

// NewStorageCommand returns the storage subcommand: status and accept of the store's identity.
func NewStorageCommand(ctx context.Context) *cobra.Command {
	// The server's flags of the store, with their defaults and help texts; nothing else of the server.
	defaults := newRecommendedOptions()
	o := newStoreOptions(defaults.Etcd, &defaults.SecureServing.ServerCert.CertDirectory, &defaults.CoreAPI.CoreAPIKubeconfigPath)
	// Only failures matter here, and Start returns them; etcd's own errors on closing are noise.
	o.EmbeddedEtcd.LogLevel = "panic"
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Show or accept the identity of the store, which the server compares with the cluster's record",
		Long: "In cluster mode tapp-apiserver records the identity of its store (a random id in its etcd, under " +
			"--etcd-prefix) in the ConfigMap --storage-identity-configmap, with the highest revision it served. It " +
			"does not serve a store that is empty, holds another identity or is rewound below that revision: its " +
			"readiness fails and requests answer 503, so that the garbage collector never deletes the workloads " +
			"of TApps and YurtAppDaemons a wrong store lacks. `status` shows both records and the verdict; " +
			"`accept --confirm` makes the current store the cluster's. Give the server's flags (--etcd-servers, " +
			"--etcd-prefix, --etcd-cafile, --etcd-certfile, --etcd-keyfile, --kubeconfig, " +
			"--storage-identity-configmap). Without --etcd-servers the embedded etcd of --embedded-etcd-data-dir " +
			"(certificates under --cert-dir) is opened, which needs the server stopped. Standalone mode keeps no record.",
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.PersistentFlags())

	var confirm bool
	status := &cobra.Command{
		Use:          "status",
		Short:        "Show the store's and the cluster's identities, the revisions, the mark and the verdict",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStorage(cmd.Context(), o, func(ctx context.Context, store *storagefence.Store, cluster *storagefence.Cluster) error {
				storagefence.Status(ctx, store, cluster).Print(cmd.OutOrStdout())
				return nil
			})
		},
	}
	accept := &cobra.Command{
		Use:   "accept --confirm",
		Short: "Make the current store the cluster's, after a deliberate reset or restore",
		Long: "accept records the current store's identity (a new one for an empty store) and revision in the " +
			"cluster, so that the server serves it. It first counts the pods, claims, Deployments, " +
			"StatefulSets and ControllerRevisions whose owning TApp or YurtAppDaemon this store lacks: the garbage collector deletes them " +
			"once the store is served. Without --confirm it only shows this.",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStorage(cmd.Context(), o, func(ctx context.Context, store *storagefence.Store, cluster *storagefence.Cluster) error {
				return runAccept(ctx, cmd.OutOrStdout(), store, cluster, confirm)
			})
		},
	}
	accept.Flags().BoolVar(&confirm, "confirm", false, "accept the store; without it nothing is changed")
	cmd.AddCommand(status, accept)
	return cmd
}

// withStorage completes and validates the flags, connects to the store and the cluster they give (starting the
// embedded etcd without --etcd-servers) and runs f.
func withStorage(ctx context.Context, o *StoreOptions, f func(context.Context, *storagefence.Store, *storagefence.Cluster) error) error {
	o.Complete()
	if err := utilerrors.NewAggregate(o.Validate()); err != nil {
		return err
	}
	stopEtcd, err := o.StartEmbeddedEtcd()
	if err != nil {
		return fmt.Errorf("opening the embedded etcd of %s (stop the server first): %w", o.EmbeddedEtcd.DataDir, err)
	}
	defer stopEtcd()
	if o.EmbeddedEtcd.ClientURL != "" {
		klog.V(2).InfoS("Started embedded etcd", "dataDir", o.EmbeddedEtcd.DataDir)
	}
	kubeConfig, err := clusterConfig(*o.Kubeconfig)
	if err != nil {
		return err
	}
	kubeConfig.UserAgent = "tapp-apiserver-storage"
	kube, err := kubernetes.NewForConfig(kubeConfig)
	if err != nil {
		return err
	}
	store, err := storagefence.NewStore(o.Etcd.StorageConfig)
	if err != nil {
		return err
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return f(ctx, store, &storagefence.Cluster{Client: kube, Name: o.Record.Value()})
}

func runAccept(ctx context.Context, out io.Writer, store *storagefence.Store, cluster *storagefence.Cluster, confirm bool) error {
	report := storagefence.Status(ctx, store, cluster)
	report.Print(out)
	if report.Store.State == storagefence.StoreUnreadable {
		return fmt.Errorf("cannot read the store: %w", report.Store.Err)
	}
	objects, err := store.Objects(ctx)
	if err != nil {
		return fmt.Errorf("reading the store's objects: %w", err)
	}
	orphans, err := storagefence.Orphans(ctx, cluster.Client, objects)
	if err != nil {
		return fmt.Errorf("counting the workloads whose owners the store lacks: %w", err)
	}
	total := 0
	resources := make([]string, 0, len(orphans))
	for r, n := range orphans {
		resources = append(resources, r)
		total += n
	}
	sort.Strings(resources)
	fmt.Fprintf(out, "Workloads whose TApp or YurtAppDaemon this store lacks: %d", total)
	if total > 0 {
		fmt.Fprintf(out, ", which the garbage collector will delete once the store is accepted:\n")
		for _, r := range resources {
			fmt.Fprintf(out, "  %s: %d\n", r, orphans[r])
		}
	} else {
		fmt.Fprintln(out)
	}
	if !confirm {
		fmt.Fprintln(out, "Nothing changed: run again with --confirm to accept this store.")
		return nil
	}
	id, mark, err := storagefence.Accept(ctx, store, cluster)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Accepted: the cluster's record now names store %s, high-water revision %d. The server serves it "+
		"within seconds.\n", id, mark)
	return nil
}
