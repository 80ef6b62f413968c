package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tetherq/tether/store"
)

// Outcomes of tether_jobs_settled_total.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
)

// scrapeTimeout bounds the store reads of one scrape.
const scrapeTimeout = 5 * time.Second

// metrics are the API's Prometheus metrics. The scheduler owns the rescue
// and recovery metrics.
type metrics struct {
	enqueued prometheus.Counter
	leased   prometheus.Counter
	settled  *prometheus.CounterVec
	duration *prometheus.HistogramVec
	hooks    *prometheus.CounterVec
	// connsRefused counts connections over LimitConns's cap.
	connsRefused prometheus.Counter
}

// newMetrics registers the API's metrics on reg, with a collector that
// reads queue and worker counts from a's store at each scrape.
func newMetrics(reg prometheus.Registerer, a *API) (*metrics, error) {
	m := &metrics{
		enqueued: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_jobs_enqueued_total", Help: "Jobs created by enqueue requests.",
		}),
		leased: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_jobs_leased_total", Help: "Jobs handed to workers by lease requests.",
		}),
		settled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_jobs_settled_total", Help: "Acks (succeeded) and fails (failed) accepted.",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tether_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern, method and status code.",
			// Long-poll leases wait up to 30 s.
			Buckets: append(slices.Clone(prometheus.DefBuckets), 30),
		}, []string{"route", "method", "code"}),
		hooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_hook_deliveries_total",
			Help: "Webhook deliveries by hook and result: accepted, duplicate or bad_signature.",
		}, []string{"hook", "result"}),
		connsRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tether_connections_refused_total",
			Help: "Connections closed at once because their client address had the maximum open.",
		}),
	}
	m.settled.WithLabelValues(outcomeSucceeded)
	m.settled.WithLabelValues(outcomeFailed)
	for name := range a.hooks {
		for _, result := range []string{hookAccepted, hookDuplicate, hookBadSignature} {
			m.hooks.WithLabelValues(name, result)
		}
	}
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tether_long_polls_waiting",
		Help: "Long-poll leases of this node asleep until a job of their queues arrives.",
	}, func() float64 { return float64(a.waiting.Load()) })
	for _, c := range []prometheus.Collector{m.enqueued, m.leased, m.settled, m.duration, m.hooks, m.connsRefused, waiting, newStateCollector(a)} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("api: register metrics: %w", err)
		}
	}
	return m, nil
}

// countEnqueued counts the jobs an enqueue created, not those it found.
func (m *metrics) countEnqueued(res *store.JobEnqueueResult) {
	for i := range res.Jobs {
		if !existing(res, i) {
			m.enqueued.Inc()
		}
	}
}

// countSettled counts the settle items that succeeded; the first nAcks
// results are acks.
func (m *metrics) countSettled(nAcks int, errs []error) {
	for i, err := range errs {
		switch {
		case err != nil:
		case i < nAcks:
			m.settled.WithLabelValues(outcomeSucceeded).Inc()
		default:
			m.settled.WithLabelValues(outcomeFailed).Inc()
		}
	}
}

// instrument observes each request's duration under its chi route pattern.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePattern() != "" {
			route = rctx.RoutePattern()
		}
		code := ww.Status()
		if code == 0 {
			code = http.StatusOK
		}
		m.duration.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(code)).
			Observe(time.Since(start).Seconds())
	})
}

// methodLabel bounds the method label to the methods the API knows.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodHead, http.MethodOptions:
		return m
	}
	return "other"
}

// maxQueueLabels bounds the queue label of tether_queue_jobs: anyone who
// may enqueue can make queues, and each would add six series to every
// scrape. The largest queues keep their names; the rest are summed.
const maxQueueLabels = 100

// otherQueues labels the sum of the queues beyond maxQueueLabels. No queue
// can be named so: parentheses are not in a queue name.
const otherQueues = "(other)"

// queueLabels returns the queues to report: the maxQueueLabels holding the
// most jobs (ties by name) as they are, then one otherQueues entry summing
// the rest, if any.
func queueLabels(queues []*store.Queue) []*store.Queue {
	if len(queues) <= maxQueueLabels {
		return queues
	}
	total := func(q *store.Queue) (n int64) {
		for _, c := range q.Counts {
			n += c
		}
		return n
	}
	sorted := slices.Clone(queues)
	slices.SortFunc(sorted, func(a, b *store.Queue) int {
		return cmp.Or(cmp.Compare(total(b), total(a)), cmp.Compare(a.Name, b.Name))
	})
	rest := &store.Queue{Name: otherQueues, Counts: map[store.State]int64{}}
	for _, q := range sorted[maxQueueLabels:] {
		for s, n := range q.Counts {
			rest.Counts[s] += n
		}
	}
	return append(sorted[:maxQueueLabels:maxQueueLabels], rest)
}

// stateCollector reports tether_queue_jobs{queue,state},
// tether_lease_throttled_total{queue,reason} and tether_workers{state} from
// the store at scrape time.
type stateCollector struct {
	a         *API
	queue     *prometheus.Desc
	throttled *prometheus.Desc
	workers   *prometheus.Desc
}

func newStateCollector(a *API) *stateCollector {
	return &stateCollector{
		a: a,
		queue: prometheus.NewDesc("tether_queue_jobs",
			"Jobs per queue and state, read from the store at scrape.", []string{"queue", "state"}, nil),
		throttled: prometheus.NewDesc("tether_lease_throttled_total",
			"Leases a queue's limit held a job back from, by limit, counted by the store across every replica "+
				"(only queues that were ever limited, which admins set, have any).", []string{"queue", "reason"}, nil),
		workers: prometheus.NewDesc("tether_workers",
			"Workers per liveness state, read from the store at scrape.", []string{"state"}, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.queue
	ch <- c.throttled
	ch <- c.workers
}

// Collect reads the store; a failed read yields an invalid metric, which
// the /metrics handler reports without dropping the other metrics.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	now := c.a.now()
	queues, err := c.a.store.QueueList(ctx, &store.QueueListParams{Now: now})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.queue, err)
	}
	for _, q := range queueLabels(queues) {
		for _, s := range store.States {
			ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(q.Counts[s]), q.Name, string(s))
		}
	}
	for _, q := range queues {
		if q.Limits == nil && q.Throttled == nil {
			continue
		}
		for _, r := range store.ThrottleReasons {
			ch <- prometheus.MustNewConstMetric(c.throttled, prometheus.CounterValue, float64(q.Throttled[r]), q.Name, string(r))
		}
	}
	workers, err := c.a.store.WorkerList(ctx, &store.WorkerListParams{})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.workers, err)
		return
	}
	counts := map[store.WorkerState]int{store.WorkerLive: 0, store.WorkerSuspect: 0, store.WorkerDead: 0}
	for _, w := range workers {
		counts[c.a.workerState(w, now)]++
	}
	for s, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(n), string(s))
	}
}
