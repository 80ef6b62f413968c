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

// fireLagBuckets span 1 ms to 2 min: a fire on time lands within a tick
// (1 s by default); catch-up fires after downtime lag by far more.
var fireLagBuckets = []float64{0.001, 0.01, 0.1, 0.25, 0.5, 1, 1.5, 2, 5, 10, 30, 60, 120}

type metrics struct {
	rescues         prometheus.Counter
	recoveryLatency prometheus.Histogram
	reaped          prometheus.Counter
	fires           *prometheus.CounterVec
	skipped         *prometheus.CounterVec
	missed          *prometheus.CounterVec
	fireLag         prometheus.Histogram
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
		fires: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_schedule_fires_total",
			Help: "Jobs this node enqueued for schedules' slots.",
		}, []string{"schedule"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_schedule_skipped_total",
			Help: "Slots this node skipped because the schedule's last job was unfinished (overlap skip).",
		}, []string{"schedule"}),
		missed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_schedule_missed_total",
			Help: "Slots this node found missed (downtime) and did not fire, by the catch-up policy.",
		}, []string{"schedule"}),
		fireLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tether_schedule_fire_lag_seconds",
			Help:    "Time from a schedule's slot to the fire that enqueued its job.",
			Buckets: fireLagBuckets,
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.rescues, m.recoveryLatency, m.reaped, m.fires, m.skipped, m.missed, m.fireLag} {
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

// observeFire counts a fire this node won: its jobs, each with its lag
// (now minus its slot), its skipped and missed slots.
func (m *metrics) observeFire(name string, res *store.ScheduleFireResult, missed int64, now time.Time) {
	m.fires.WithLabelValues(name).Add(float64(len(res.Jobs)))
	m.skipped.WithLabelValues(name).Add(float64(res.Skipped))
	m.missed.WithLabelValues(name).Add(float64(missed))
	for _, j := range res.Jobs {
		if j.ScheduledFor != nil {
			m.fireLag.Observe(now.Sub(*j.ScheduledFor).Seconds())
		}
	}
}
