package sqlite_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

var benchPayload = json.RawMessage(`{"to":"user@example.com","template":"welcome","locale":"en","n":123456789}`)

func enqueueN(b *testing.B, s store.Store, n int, now time.Time) {
	b.Helper()
	for done := 0; done < n; done += 1000 {
		specs := make([]store.JobSpec, min(1000, n-done))
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "bench", Payload: benchPayload}
		}
		if _, err := s.JobEnqueue(b.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueueBatch measures batch enqueue of 1,000 jobs per call.
func BenchmarkEnqueueBatch(b *testing.B) {
	s := open(b)
	now := time.Now()
	b.ResetTimer()
	for b.Loop() {
		enqueueN(b, s, 1000, now)
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkLeaseSettle measures the worker hot path: lease 100, settle 100,
// from a queue without limits and from one with concurrency 1,000 (which
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
			enqueueN(b, s, 200_000, now)
			ctx := b.Context()
			b.ResetTimer()
			jobs := 0
			for b.Loop() {
				leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"default"}, Max: batch, Now: now})
				if err != nil || len(leased) == 0 {
					b.Fatal(err, len(leased))
				}
				p := &store.JobSettleParams{Now: now}
				for _, j := range leased {
					p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
				}
				if _, err := s.JobSettle(ctx, p); err != nil {
					b.Fatal(err)
				}
				jobs += len(leased)
			}
			b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
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
