package scheduler

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherq/tether/store"
)

// recoveryBuckets span 0.1 s to 120 s, finer around the default target of
// DeadAfter (15 s) plus one tick, where a healthy deployment lands.
var recoveryBuckets = []float64{0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 16, 17, 20, 30, 60, 120}

type metrics struct {
	rescues         prometheus.Counter
	recoveryLatency prometheus.Histogram
	reaped          prometheus.Counter
}

// newMetrics builds the scheduler's metrics and registers them with reg,
// unless reg is nil.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		rescues: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_rescues_total",
			Help: "Jobs this node recovered from dead workers.",
		}),
		recoveryLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tether_recovery_latency_seconds",
			Help:    "Time from a dead owner's last sign of life to the rescue of its job.",
			Buckets: recoveryBuckets,
		}),
		reaped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_reaped_total",
			Help: "Running jobs this node ended as timed_out past their lease.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.rescues, m.recoveryLatency, m.reaped} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("scheduler: register metrics: %w", err)
		}
	}
	return m, nil
}

// observeRescues counts the jobs won and the latency of each: now minus its
// owner's last sign of life, unknown (and skipped) if it never registered.
func (m *metrics) observeRescues(orphans []store.Orphan, won []*store.Job, now time.Time) {
	m.rescues.Add(float64(len(won)))
	last := make(map[string]time.Time, len(orphans))
	for _, o := range orphans {
		last[o.JobID] = o.LastHeartbeatAt
	}
	for _, j := range won {
		if t := last[j.ID]; !t.IsZero() {
			m.recoveryLatency.Observe(now.Sub(t).Seconds())
		}
	}
}
