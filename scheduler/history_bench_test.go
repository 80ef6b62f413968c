package scheduler_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
)

// BenchmarkLeaseHistory measures the burn-down of a queue that has already
// run many jobs against a fresh one, each on a store of its own with the
// scheduler ticking (every second, as a server's): 4 workers lease 100 and
// ack them, until 50,000 jobs are done. The history is built the way a busy
// queue builds it, through the store (enqueue, lease and ack 1,000 at a
// time), so its succeeded rows, its dead index entries and its vacuums are
// those of a real deployment. TETHER_BENCH_HISTORY sets how many (default
// 300,000, the figure; 1,000,000 takes minutes per backend).
//
//   - rate-ratio: the queue with history's acked jobs per second over the
//     fresh queue's (target at least 0.8);
//   - p50-ratio, p99-ratio: the same for a lease call's latency (p99 at most
//     2).
//
// The fresh store and the store with history are measured one after the
// other in each iteration; -benchtime 3x repeats the pair:
//
//	TETHER_BENCH_BIG=1 go test -run '^$' -bench LeaseHistory/postgres -benchtime 3x -timeout 60m ./scheduler/
func BenchmarkLeaseHistory(b *testing.B) {
	if os.Getenv("TETHER_BENCH_BIG") != "1" {
		b.Skip("set TETHER_BENCH_BIG=1 to build a history of finished jobs (minutes) and measure")
	}
	history := 300_000
	if v := os.Getenv("TETHER_BENCH_HISTORY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("TETHER_BENCH_HISTORY=%q: want a number of jobs, at least 1000", v)
		}
		history = n
	}
	for _, bk := range scaleBackends {
		if bk.name == "redis" {
			continue // its finished jobs live in sets of their own, apart from the queue
		}
		b.Run(bk.name, func(b *testing.B) {
			var rates, p50s, p99s []float64
			for b.Loop() {
				fresh := burnDownWithHistory(b, bk.open(b), 0)
				old := burnDownWithHistory(b, bk.open(b), history)
				b.Logf("fresh: %.0f jobs/s, lease p50 %.1f ms p99 %.1f ms; with %d succeeded: %.0f jobs/s, p50 %.1f ms p99 %.1f ms",
					fresh.rate, ms(fresh.p50), ms(fresh.p99), history, old.rate, ms(old.p50), ms(old.p99))
				rates = append(rates, old.rate/fresh.rate)
				p50s = append(p50s, float64(old.p50)/float64(fresh.p50))
				p99s = append(p99s, float64(old.p99)/float64(fresh.p99))
			}
			b.ReportMetric(medianOf(rates), "rate-ratio")
			b.ReportMetric(medianOf(p50s), "p50-ratio")
			b.ReportMetric(medianOf(p99s), "p99-ratio")
		})
	}
}

type burnDown struct {
	rate     float64 // acked jobs per second
	p50, p99 time.Duration
}

const (
	burnJobs    = 50_000
	burnWorkers = 4
	burnBatch   = 100
)

// burnDownWithHistory runs history jobs through the queue, then burns down
// burnJobs fresh ones in it, with the scheduler ticking all along.
func burnDownWithHistory(b *testing.B, st store.Store, history int) burnDown {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	sched, err := scheduler.New(scheduler.Config{Store: st, NodeID: "bench-node",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	wg.Go(func() { sched.Run(ctx) })
	buildHistory(b, st, history, func() time.Time { return time.Now() })
	fill(b, st, "work", burnJobs, time.Now())

	var mu sync.Mutex
	var leases []time.Duration
	acked := 0
	start := time.Now()
	var workers sync.WaitGroup
	for w := range burnWorkers {
		workers.Go(func() {
			for {
				n, took := leaseAndAck(b, st, workerName("burn", w), burnBatch, time.Now())
				mu.Lock()
				leases = append(leases, took)
				acked += n
				mu.Unlock()
				if n == 0 {
					return
				}
			}
		})
	}
	workers.Wait()
	elapsed := time.Since(start)
	if acked != burnJobs {
		b.Fatalf("acked %d of %d", acked, burnJobs)
	}
	slices.Sort(leases)
	return burnDown{rate: float64(acked) / elapsed.Seconds(), p50: leases[len(leases)/2], p99: leases[len(leases)*99/100]}
}

// buildHistory runs n jobs through the work queue as a busy queue does,
// 1,000 at a time: enqueued, leased and acked at clock().
func buildHistory(b *testing.B, st store.Store, n int, clock func() time.Time) {
	for done := 0; done < n; done += store.MaxBatch {
		k := min(store.MaxBatch, n-done)
		fill(b, st, "work", k, clock())
		if got, _ := leaseAndAck(b, st, "builder", k, clock()); got != k {
			b.Fatalf("building the history: leased %d of %d", got, k)
		}
	}
}

// leaseAndAck leases up to max jobs of the work queue as worker and
// acks them, at now; it returns how many, and how long the lease call took.
func leaseAndAck(b *testing.B, st store.Store, worker string, max int, now time.Time) (int, time.Duration) {
	ctx := context.Background()
	began := time.Now()
	jobs, err := st.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{"work"}, Max: max, Now: now})
	took := time.Since(began)
	if err != nil {
		b.Fatal(err)
	}
	if len(jobs) == 0 {
		return 0, took
	}
	p := &store.JobSettleParams{Now: now}
	for _, j := range jobs {
		p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
	}
	if _, err := st.JobSettle(ctx, p); err != nil {
		b.Fatal(err)
	}
	return len(jobs), took
}

func medianOf(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
