package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The scale benchmarks of issue 12, one body for every backend: each
// backend's bench_test.go runs them on a store of its own, so the figures
// of the three compare like for like.

var benchPayload = json.RawMessage(`{"to":"user@example.com","template":"welcome","locale":"en","n":123456789}`)

// BenchLeaseManyQueues measures lease + settle at batch 100 on a store
// holding 1,000 queues, a lease naming 1 of them or 10 (sub-benchmarks
// queues=1 and queues=10). The bound: 10 queues at ≥ 0.7× the rate of one.
// open returns a fresh, empty store for each sub-benchmark.
func BenchLeaseManyQueues(b *testing.B, open func(testing.TB) store.Store) {
	for _, named := range []int{1, 10} {
		b.Run(fmt.Sprintf("queues=%d", named), func(b *testing.B) {
			s := open(b)
			now := time.Now()
			queues := make([]string, named)
			for q := range queues {
				queues[q] = fmt.Sprintf("q%03d", q)
			}
			// Every other queue holds a job; the named ones share 100,000,
			// enqueued round robin so a lease takes from all of them.
			specs := make([]store.JobSpec, 0, 1000)
			for q := named; q < 1000; q++ {
				specs = append(specs, store.JobSpec{Kind: "bench", Queue: fmt.Sprintf("q%03d", q), Payload: benchPayload})
			}
			benchEnqueue(b, s, specs, now)
			for done := 0; done < 100_000; done += 1000 {
				specs = specs[:0]
				for i := range 1000 {
					specs = append(specs, store.JobSpec{Kind: "bench", Queue: queues[(done+i)%named], Payload: benchPayload})
				}
				benchEnqueue(b, s, specs, now)
			}
			jobs := 0
			for b.Loop() {
				n := benchLeaseSettle(b, s, queues, now)
				if n == 0 {
					b.Fatal("the queues ran dry: enqueue more before the loop")
				}
				jobs += n
			}
			b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// BenchEnqueueSingle measures enqueues of one job per call from clients
// concurrent callers, as many producers sending POST /v1/jobs do. Each
// b.Loop iteration is one enqueue.
func BenchEnqueueSingle(b *testing.B, s store.Store, clients int) {
	var (
		work = make(chan struct{})
		n    atomic.Int64
		wg   sync.WaitGroup
	)
	for range clients {
		wg.Go(func() {
			for range work {
				_, err := s.JobEnqueue(b.Context(), &store.JobEnqueueParams{
					Jobs: []store.JobSpec{{Kind: "bench", Payload: benchPayload}}, Now: time.Now()})
				if err != nil {
					b.Error(err)
				}
				n.Add(1)
			}
		})
	}
	for b.Loop() {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "jobs/s")
}

func benchEnqueue(b *testing.B, s store.Store, specs []store.JobSpec, now time.Time) {
	b.Helper()
	if _, err := s.JobEnqueue(b.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		b.Fatal(err)
	}
}

// benchLeaseSettle leases up to 100 jobs of queues and acks them in one
// settle; it returns how many it handled.
func benchLeaseSettle(b *testing.B, s store.Store, queues []string, now time.Time) int {
	b.Helper()
	leased, err := s.JobLease(b.Context(), &store.JobLeaseParams{WorkerID: "w", Queues: queues, Max: 100, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	p := &store.JobSettleParams{Now: now}
	for _, j := range leased {
		p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
	}
	res, err := s.JobSettle(b.Context(), p)
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

// BenchRecover measures a bulk rescue alone: 10,000 running jobs of 100
// workers that went silent together, listed and recovered in batches of
// store.MaxBatch as the scheduler's recoverer does, with nothing else
// running. Each b.Loop iteration is one whole rescue in a fresh store (the
// set-up is outside the timer); rescued-jobs/s is the figure.
func BenchRecover(b *testing.B, open func(testing.TB) store.Store) {
	const workers, perWorker = 100, 100
	rescued := 0
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		s := open(b)
		now := time.Now()
		specs := make([]store.JobSpec, store.MaxBatch)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "bench", Queue: "orphans", Payload: benchPayload}
		}
		for range workers * perWorker / store.MaxBatch {
			benchEnqueue(b, s, specs, now)
		}
		for w := range workers {
			jobs, err := s.JobLease(b.Context(), &store.JobLeaseParams{WorkerID: fmt.Sprintf("silent-%03d", w),
				Queues: []string{"orphans"}, Max: perWorker, Now: now})
			if err != nil || len(jobs) != perWorker {
				b.Fatalf("lease for worker %d: %d jobs, %v", w, len(jobs), err)
			}
		}
		later := now.Add(time.Minute)
		b.StartTimer()
		start := time.Now()
		for {
			orphans, err := s.JobListOrphans(b.Context(), &store.JobListOrphansParams{DeadBefore: now, Limit: store.MaxBatch})
			if err != nil {
				b.Fatal(err)
			}
			if len(orphans) == 0 {
				break
			}
			won, err := s.JobRecover(b.Context(), &store.JobRecoverParams{Orphans: orphans, NodeID: "bench-node", MaxRescues: 100, Now: later})
			if err != nil || len(won) != len(orphans) {
				b.Fatalf("recover %d orphans: won %d, %v", len(orphans), len(won), err)
			}
			rescued += len(won)
		}
		elapsed += time.Since(start)
		if rescued%(workers*perWorker) != 0 {
			b.Fatalf("rescued %d, not a multiple of %d", rescued, workers*perWorker)
		}
	}
	b.ReportMetric(float64(rescued)/elapsed.Seconds(), "rescued-jobs/s")
}

// BenchLimit sets concurrency n on the default queue; 0 sets nothing.
func BenchLimit(b *testing.B, s store.Store, n int, now time.Time) {
	if n == 0 {
		return
	}
	if _, err := s.QueueSetLimits(b.Context(), &store.QueueSetLimitsParams{Name: store.DefaultQueue,
		Limits: &store.Limits{Concurrency: &n}, Now: now}); err != nil {
		b.Fatal(err)
	}
}
