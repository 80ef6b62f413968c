package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/storetest"
)

var benchPayload = json.RawMessage(`{"to":"user@example.com","template":"welcome","locale":"en","n":123456789}`)

func benchEnqueue(b *testing.B, s store.Store, n int, now time.Time) {
	b.Helper()
	for done := 0; done < n; done += 1000 {
		specs := make([]store.JobSpec, min(1000, n-done))
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "bench", Payload: benchPayload}
		}
		if _, err := s.JobEnqueue(context.Background(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueueBatch measures batch enqueue of 1,000 jobs per call: one
// INSERT over unnest.
func BenchmarkEnqueueBatch(b *testing.B) {
	s := open(b)
	now := time.Now()
	for b.Loop() {
		benchEnqueue(b, s, 1000, now)
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "jobs/s")
}

// leaseSettle leases up to batch jobs as worker and acks them in one
// settle call; it returns how many it handled.
func leaseSettle(b *testing.B, s store.Store, worker string, batch int, now time.Time) int {
	ctx := context.Background()
	leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{store.DefaultQueue}, Max: batch, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	if len(leased) == 0 {
		return 0
	}
	p := &store.JobSettleParams{Now: now}
	for _, j := range leased {
		p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
	}
	res, err := s.JobSettle(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range res {
		if e != nil {
			b.Fatal(e)
		}
	}
	return len(leased)
}

// BenchmarkLeaseSettle measures the worker hot path on one connection at a
// time: lease a batch, settle it.
// From a queue without limits and from one with concurrency 1,000 (which
// never binds here: it measures what the limited lease path costs).
func BenchmarkLeaseSettle(b *testing.B) {
	for _, c := range []struct {
		batch, concurrency int
	}{{1, 0}, {1, 1000}, {100, 0}, {100, 1000}} {
		batch := c.batch
		b.Run(fmt.Sprintf("batch=%d/concurrency=%d", batch, c.concurrency), func(b *testing.B) {
			s := open(b)
			now := time.Now()
			storetest.BenchLimit(b, s, c.concurrency, now)
			benchEnqueue(b, s, 100*1000, now)
			jobs := 0
			cpu := startPGMeter()
			for b.Loop() {
				n := leaseSettle(b, s, "w", batch, now)
				if n == 0 {
					b.Fatal("the queue ran dry: enqueue more before the loop")
				}
				jobs += n
			}
			b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
			cpu.report(b, jobs)
		})
	}
}

// BenchmarkLeaseSettleWorkers is the burn-down shape of the HTTP bench:
// four workers, each leasing 100 and settling them, in parallel.
func BenchmarkLeaseSettleWorkers(b *testing.B) {
	s := open(b)
	now := time.Now()
	benchEnqueue(b, s, 200*1000, now)
	burnDown(b, s, 4, 100, now)
}

// burnDown has workers goroutines lease and settle batch jobs, one batch
// per b.Loop iteration: the loop hands each iteration to the next free
// worker, so up to workers batches are in flight at once.
func burnDown(b *testing.B, s store.Store, workers, batch int, now time.Time) {
	b.Helper()
	var (
		work = make(chan struct{})
		mu   sync.Mutex
		jobs int
		wg   sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for range work {
				n := leaseSettle(b, s, fmt.Sprintf("w-%d", w), batch, now)
				if n == 0 {
					b.Error("the queue ran dry: enqueue more before the loop")
				}
				mu.Lock()
				jobs += n
				mu.Unlock()
			}
		})
	}
	cpu := startPGMeter()
	for b.Loop() {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
	cpu.report(b, jobs)
}

// BenchmarkLeaseSettleBigHistory measures the burn-down with 1,000,000
// succeeded jobs in the table: partial indexes keep lease and settle
// O(batch), so the rate should match an empty history. It takes minutes to
// seed, so it runs only with TETHER_BENCH_BIG=1.
func BenchmarkLeaseSettleBigHistory(b *testing.B) {
	if os.Getenv("TETHER_BENCH_BIG") != "1" {
		b.Skip("set TETHER_BENCH_BIG=1 to seed 1,000,000 succeeded jobs and measure")
	}
	s := open(b)
	seedSucceeded(b, s, 1_000_000)
	now := time.Now()
	benchEnqueue(b, s, 200*1000, now)
	burnDown(b, s, 4, 100, now)
}

// seedSucceeded inserts n succeeded jobs with their attempts directly, and
// vacuums, as a long-running deployment's table would be. The test role
// must be a superuser (scripts/postgres.sh makes it one) for CHECKPOINT.
func seedSucceeded(b *testing.B, s *postgres.Store, n int) {
	b.Helper()
	ctx := context.Background()
	err := s.ExecForTest(ctx, `INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts,
		timeout_ms, backoff_base_ms, backoff_max_ms, run_at, created_at, started_at, finished_at, payload,
		worker_id, token, attempt_id)
		SELECT gen_random_uuid(), 'default', 'bench', 'succeeded', 0, 1, 20, 1800000, 1000, 3600000,
			now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour', now(), $1::jsonb,
			'w', md5(i::text), gen_random_uuid()
		FROM generate_series(1, $2) i`, string(benchPayload), n)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.ExecForTest(ctx, `INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome)
		SELECT attempt_id, id, 1, 'w', started_at, finished_at, 'succeeded' FROM jobs`); err != nil {
		b.Fatal(err)
	}
	if err := s.ExecForTest(ctx, `VACUUM ANALYZE jobs`); err != nil {
		b.Fatal(err)
	}
	if err := s.ExecForTest(ctx, `VACUUM ANALYZE attempts`); err != nil {
		b.Fatal(err)
	}
	// The seed wrote a gigabyte of WAL; checkpoint now so the flush does
	// not land inside the measurement.
	if err := s.ExecForTest(ctx, `CHECKPOINT`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPhases times each step of a job's life on one connection, in
// batches of 100 with the clock moving: enqueue, lease, settle (acks). The
// figures are wall time per job, the database's work plus one round trip
// and, for enqueue and settle, the commit's WAL flush.
func BenchmarkPhases(b *testing.B) {
	s := open(b)
	ctx := context.Background()
	var enq, lease, settle time.Duration
	n := 0
	for b.Loop() {
		now := time.Now()
		specs := make([]store.JobSpec, 100)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "bench", Payload: benchPayload}
		}
		t := time.Now()
		if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			b.Fatal(err)
		}
		enq += time.Since(t)
		t = time.Now()
		leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{store.DefaultQueue}, Max: 100, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		lease += time.Since(t)
		p := &store.JobSettleParams{Now: now}
		for _, j := range leased {
			p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
		}
		t = time.Now()
		if _, err := s.JobSettle(ctx, p); err != nil {
			b.Fatal(err)
		}
		settle += time.Since(t)
		n++
	}
	b.ReportMetric(float64(enq.Microseconds())/float64(n*100), "enq-µs/job")
	b.ReportMetric(float64(lease.Microseconds())/float64(n*100), "lease-µs/job")
	b.ReportMetric(float64(settle.Microseconds())/float64(n*100), "settle-µs/job")
}

// BenchmarkLeaseManyQueues: lease + settle naming 1 or 10 of 1,000 queues
// (storetest.BenchLeaseManyQueues).
func BenchmarkLeaseManyQueues(b *testing.B) {
	storetest.BenchLeaseManyQueues(b, func(tb testing.TB) store.Store { return open(tb) })
}

// BenchmarkEnqueueSingle: one job per call from 16 callers at once
// (storetest.BenchEnqueueSingle).
func BenchmarkEnqueueSingle(b *testing.B) {
	storetest.BenchEnqueueSingle(b, open(b), 16)
}

// BenchmarkRecover: a rescue of 10,000 orphans alone (storetest.BenchRecover).
func BenchmarkRecover(b *testing.B) {
	storetest.BenchRecover(b, func(tb testing.TB) store.Store { return open(tb) })
}
