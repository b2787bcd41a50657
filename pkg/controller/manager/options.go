package manager

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"
)

// Options are the flags of the embedded controllers.
type Options struct {
	// Controllers selects the controllers: "*" enables all, "name" enables one, "-name" disables one.
	Controllers []string
	// LeaderElection configures the Lease that makes one replica of tapp-apiserver run the controllers.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// Workers is the number of objects each controller syncs concurrently.
	Workers int
	// KubeAPIQPS and KubeAPIBurst limit the controllers' requests to the cluster.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ResyncPeriod is the informers' resync period.
	ResyncPeriod time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Controllers: []string{"*"},
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect:       true,
			LeaseDuration:     metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline:     metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:       metav1.Duration{Duration: 2 * time.Second},
			ResourceLock:      "leases",
			ResourceName:      LeaseName,
			ResourceNamespace: LeaseNamespace,
		},
		Workers:      5,
		KubeAPIQPS:   100,
		KubeAPIBurst: 200,
		ResyncPeriod: 12 * time.Hour,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"Controllers to run in cluster mode. '*' enables all, 'foo' enables foo, '-foo' disables foo; "+
			"an empty list runs none. Known controllers: %s.", strings.Join(Names(), ", ")))
	componentbaseoptions.BindLeaderElectionFlags(&o.LeaderElection, fs)
	fs.IntVar(&o.Workers, "controller-workers", o.Workers,
		"Number of objects each controller syncs concurrently.")
	fs.Float32Var(&o.KubeAPIQPS, "controller-kube-api-qps", o.KubeAPIQPS,
		"Queries per second of the controllers' client of the cluster.")
	fs.IntVar(&o.KubeAPIBurst, "controller-kube-api-burst", o.KubeAPIBurst,
		"Burst of the controllers' client of the cluster.")
	fs.DurationVar(&o.ResyncPeriod, "controller-resync-period", o.ResyncPeriod,
		"Period after which every object is synced again even without a change.")
}

// Validate checks the flags.
func (o *Options) Validate() []error {
	var errs []error
	known := sets.New(Names()...)
	for _, c := range o.Controllers {
		name := strings.TrimPrefix(c, "-")
		if c != "*" && !known.Has(name) {
			errs = append(errs, fmt.Errorf("--controllers: unknown controller %q (known: %s)", c, strings.Join(Names(), ", ")))
		}
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--controller-workers must be at least 1, got %d", o.Workers))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst < 1 {
		errs = append(errs, fmt.Errorf("--controller-kube-api-qps and --controller-kube-api-burst must be positive"))
	}
	le := o.LeaderElection
	if le.LeaderElect && !(le.LeaseDuration.Duration > le.RenewDeadline.Duration && le.RenewDeadline.Duration > le.RetryPeriod.Duration && le.RetryPeriod.Duration > 0) {
		errs = append(errs, fmt.Errorf("leader election needs --leader-elect-lease-duration > --leader-elect-renew-deadline > --leader-elect-retry-period > 0"))
	}
	return errs
}

// Enabled returns the names of the controllers the flags select, sorted.
func (o *Options) Enabled() []string {
	var out []string
	for _, name := range Names() {
		if o.isEnabled(name) {
			out = append(out, name)
		}
	}
	return out
}

func (o *Options) isEnabled(name string) bool {
	star := false
	for _, c := range o.Controllers {
		switch c {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	return star
}

// Names returns the names of every known controller, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for name := range registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
