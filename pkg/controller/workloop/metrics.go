package workloop

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Result labels of the metrics.
const (
	ResultSuccess  = "success"
	ResultConflict = "conflict"
	ResultError    = "error"
)

// Metrics are a controller's sync duration histogram (<subsystem>_sync_duration_seconds{result}) and API
// actions counter (<subsystem>_actions_total{action,result}).
type Metrics struct {
	syncDuration *metrics.HistogramVec
	actions      *metrics.CounterVec
}

// NewMetrics creates a controller's metrics under subsystem (e.g. "tapp_controller") and registers them
// with the legacy registry; kind names what the controller syncs in the help texts (e.g. "TApp"). Call it
// once per subsystem, from a package-level variable: a second registration panics.
func NewMetrics(subsystem, kind string) *Metrics {
	m := &Metrics{
		syncDuration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem:      subsystem,
			Name:           "sync_duration_seconds",
			Help:           "Duration of one sync of a " + kind + ", by result (success, conflict, error).",
			Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
			StabilityLevel: metrics.ALPHA,
		}, []string{"result"}),
		actions: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      subsystem,
			Name:           "actions_total",
			Help:           "API actions of the " + kind + " controller, by action and result (success, conflict, error).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"action", "result"}),
	}
	legacyregistry.MustRegister(m.syncDuration, m.actions)
	return m
}

// ObserveSync records one sync that took d and returned err.
func (m *Metrics) ObserveSync(d time.Duration, err error) {
	m.syncDuration.WithLabelValues(Result(err)).Observe(d.Seconds())
}

// CountAction counts one API action (e.g. "create") that returned err.
func (m *Metrics) CountAction(action string, err error) {
	m.actions.WithLabelValues(action, Result(err)).Inc()
}

// Result is the result label of err: success, conflict (IsConflict) or error.
func Result(err error) string {
	switch {
	case err == nil:
		return ResultSuccess
	case IsConflict(err):
		return ResultConflict
	default:
		return ResultError
	}
}

// IsConflict reports whether err is a conflict, or a non-empty aggregate of conflicts only: a stale cache,
// retried without reporting an error.
func IsConflict(err error) bool {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if !IsConflict(e) {
				return false
			}
		}
		return len(agg.Errors()) > 0
	}
	return apierrors.IsConflict(err)
}
