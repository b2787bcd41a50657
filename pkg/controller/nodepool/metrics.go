package nodepool

import (
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	syncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "nodepool_controller",
		Name:           "sync_duration_seconds",
		Help:           "Duration of one sync of a NodePool, by result (success, conflict, error).",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	actions = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "nodepool_controller",
		Name:           "actions_total",
		Help:           "API actions of the NodePool controller, by action and result (success, conflict, error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"action", "result"})
	registerMetrics sync.Once
)

func init() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(syncDuration, actions)
	})
}

func result(err error) string {
	switch {
	case err == nil:
		return "success"
	case apierrors.IsConflict(err):
		return "conflict"
	default:
		return "error"
	}
}

func observeSync(d time.Duration, err error) {
	syncDuration.WithLabelValues(result(err)).Observe(d.Seconds())
}

func countAction(action string, err error) {
	actions.WithLabelValues(action, result(err)).Inc()
}
