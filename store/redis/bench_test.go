package redis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
)

// benchPayload is about 100 bytes, as in the peer benchmarks.
var benchPayload = json.RawMessage(`{"to":"user@example.com","template":"welcome","locale":"en","n":123456789,"pad":"xxxxxxxxxx"}`)

func enqueueN(tb testing.TB, s store.Store, n int, now time.Time) {
	tb.Helper()
	for done := 0; done < n; done += 1000 {
		specs := make([]store.JobSpec, min(1000, n-done))
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "bench", Payload: benchPayload}
		}
		if _, err := s.JobEnqueue(context.Background(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkEnqueueBatch measures batch enqueue, 1,000 jobs per call.
func BenchmarkEnqueueBatch(b *testing.B) {
	url := testURL(b)
	s := open(b, url, "")
	now := time.Now()
	cpu := serverCPU(b, url)
	for b.Loop() {
		enqueueN(b, s, 1000, now)
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64((serverCPU(b, url)-cpu).Microseconds())/float64(b.N*1000), "redis-µs/job")
}

// BenchmarkLeaseSettle measures the worker hot path: lease a batch, settle
// it with one call.
// From a queue without limits and from one with concurrency 1,000 (which
// never binds here: it measures what the limited lease path costs).
func BenchmarkLeaseSettle(b *testing.B) {
	for _, c := range []struct {
		batch, concurrency int
	}{{1, 0}, {1, 1000}, {100, 0}, {100, 1000}} {
		batch := c.batch
		b.Run(fmt.Sprintf("batch=%d/concurrency=%d", batch, c.concurrency), func(b *testing.B) {
			url := testURL(b)
			s := open(b, url, "")
			ctx := context.Background()
			now := time.Now()
			if c.concurrency > 0 {
				n := c.concurrency
				if _, err := s.QueueSetLimits(ctx, &store.QueueSetLimitsParams{Name: store.DefaultQueue,
					Limits: &store.Limits{Concurrency: &n}, Now: now}); err != nil {
					b.Fatal(err)
				}
			}
			const refill = 20_000
			enqueueN(b, s, refill, now)
			cpu := serverCPU(b, url)
			refillCPU := time.Duration(0)
			b.ResetTimer()
			jobs := 0
			for range b.N {
				leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "10.0.0.5:8080:w-1", Queues: []string{"default"}, Max: batch, Now: now})
				if err != nil {
					b.Fatal(err)
				}
				if len(leased) == 0 {
					b.StopTimer()
					before := serverCPU(b, url)
					enqueueN(b, s, refill, now)
					refillCPU += serverCPU(b, url) - before
					b.StartTimer()
					continue
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
			// redis-server's own CPU per job, which a busy machine sways far
			// less than the wall clock.
			used := serverCPU(b, url) - cpu - refillCPU
			b.ReportMetric(float64(used.Microseconds())/float64(max(jobs, 1)), "redis-µs/job")
		})
	}
}

// BenchmarkRetryCycle measures the retry path, where the index of
// retrying jobs is written: lease a batch of 100, fail it with a retry
// delay (scheduled, attempt > 0), promote it once due.
func BenchmarkRetryCycle(b *testing.B) {
	url := testURL(b)
	s := open(b, url, "")
	ctx := context.Background()
	now := time.Now()
	const batch = 100
	specs := make([]store.JobSpec, batch)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "bench", Payload: benchPayload, MaxAttempts: 1 << 30}
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		b.Fatal(err)
	}
	retryIn := time.Second
	cpu := serverCPU(b, url)
	jobs := 0
	for b.Loop() {
		leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w-1", Queues: []string{"default"}, Max: batch, Now: now})
		if err != nil || len(leased) != batch {
			b.Fatalf("lease: %d jobs, %v", len(leased), err)
		}
		p := &store.JobSettleParams{Now: now}
		for _, j := range leased {
			p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "x", RetryIn: &retryIn})
		}
		if _, err := s.JobSettle(ctx, p); err != nil {
			b.Fatal(err)
		}
		now = now.Add(2 * retryIn)
		if n, err := s.JobPromote(ctx, &store.JobPromoteParams{Now: now, Limit: batch}); err != nil || n != batch {
			b.Fatalf("promote: %d, %v", n, err)
		}
		jobs += batch
	}
	b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64((serverCPU(b, url)-cpu).Microseconds())/float64(max(jobs, 1)), "redis-µs/job")
}

// serverCPU is the CPU time redis-server's main thread has used.
func serverCPU(tb testing.TB, url string) time.Duration {
	tb.Helper()
	o, err := goredis.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	c := goredis.NewClient(o)
	defer c.Close()
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total time.Duration
	for _, line := range strings.Split(info, "\r\n") {
		for _, f := range []string{"used_cpu_sys_main_thread:", "used_cpu_user_main_thread:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				sec, _ := strconv.ParseFloat(v, 64)
				total += time.Duration(sec * float64(time.Second))
			}
		}
	}
	return total
}

// TestMemoryPerQueuedJob measures the Redis memory one waiting job takes:
// the used_memory grown by 100,000 jobs with ~100-byte payloads, on a
// redis-server of its own. It runs with TETHER_BENCH_BIG=1.
func TestMemoryPerQueuedJob(t *testing.T) {
	if os.Getenv("TETHER_BENCH_BIG") != "1" {
		t.Skip("set TETHER_BENCH_BIG=1 to measure memory per queued job")
	}
	srv := storetest.StartRedis(t)
	c := raw(t, srv.URL())
	s := open(t, srv.URL(), redis.DefaultPrefix)
	used := func() int64 {
		t.Helper()
		c.MemoryUsage(t.Context(), "warm-up") // settle the allocator's view
		info, err := c.Info(t.Context(), "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		return infoField(t, info, "used_memory")
	}
	// A first job creates the queue's keys; the figure is the increment.
	enqueueN(t, s, 1, time.Now())
	before := used()
	const n = 100_000
	enqueueN(t, s, n, time.Now())
	after := used()
	perJob := float64(after-before) / n
	t.Logf("used_memory %d → %d bytes: %.0f bytes per queued job (~%d-byte payload)", before, after, perJob, len(benchPayload))
	q, err := s.QueueList(t.Context(), &store.QueueListParams{})
	if err != nil || len(q) != 1 || q[0].Counts[store.StateAvailable] != n+1 {
		t.Fatalf("queues = %+v, %v", q, err)
	}
	if perJob > 1500 {
		t.Errorf("%.0f bytes per queued job, more than the 1,500 budget", perJob)
	}
}

func infoField(t *testing.T, info, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", name)
	return 0
}

// BenchmarkLeaseManyQueues: lease + settle naming 1 or 10 of 1,000 queues
// (storetest.BenchLeaseManyQueues).
func BenchmarkLeaseManyQueues(b *testing.B) {
	url := testURL(b)
	storetest.BenchLeaseManyQueues(b, func(tb testing.TB) store.Store { return open(tb, url, "") })
}

// BenchmarkEnqueueSingle: one job per call from 16 callers at once
// (storetest.BenchEnqueueSingle).
func BenchmarkEnqueueSingle(b *testing.B) {
	storetest.BenchEnqueueSingle(b, open(b, testURL(b), ""), 16)
}

// BenchmarkRecover: a rescue of 10,000 orphans alone (storetest.BenchRecover).
func BenchmarkRecover(b *testing.B) {
	url := testURL(b)
	storetest.BenchRecover(b, func(tb testing.TB) store.Store { return open(tb, url, "") })
}

// BenchmarkRecoverServer is BenchmarkRecover's rescue of 10,000 orphans of
// 100 workers with redis-server's own CPU split by step: list-µs/job for
// JobListOrphans, recover-µs/job for JobRecover (the server's main thread,
// which a busy machine sways far less than the wall clock), and the wall
// clock per job of both.
func BenchmarkRecoverServer(b *testing.B) {
	url := testURL(b)
	const workers, perWorker = 100, 100
	var list, rec, wall time.Duration
	jobs := 0
	for b.Loop() {
		b.StopTimer()
		s := open(b, url, "")
		now := time.Now()
		enqueueN(b, s, workers*perWorker, now)
		for w := range workers {
			leased, err := s.JobLease(b.Context(), &store.JobLeaseParams{WorkerID: fmt.Sprintf("silent-%03d", w),
				Queues: []string{"default"}, Max: perWorker, Now: now})
			if err != nil || len(leased) != perWorker {
				b.Fatalf("lease for worker %d: %d jobs, %v", w, len(leased), err)
			}
		}
		later := now.Add(time.Minute)
		b.StartTimer()
		for {
			start, cpu := time.Now(), serverCPU(b, url)
			orphans, err := s.JobListOrphans(b.Context(), &store.JobListOrphansParams{DeadBefore: now, Limit: store.MaxBatch})
			if err != nil {
				b.Fatal(err)
			}
			listed := serverCPU(b, url)
			list += listed - cpu
			if len(orphans) == 0 {
				break
			}
			mid := time.Now()
			won, err := s.JobRecover(b.Context(), &store.JobRecoverParams{Orphans: orphans, NodeID: "bench-node", MaxRescues: 100, Now: later})
			if err != nil || len(won) != len(orphans) {
				b.Fatalf("recover %d orphans: won %d, %v", len(orphans), len(won), err)
			}
			wall += time.Since(mid) + mid.Sub(start)
			rec += serverCPU(b, url) - listed
			jobs += len(won)
		}
	}
	perJob := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(max(jobs, 1)) }
	b.ReportMetric(perJob(list), "list-µs/job")
	b.ReportMetric(perJob(rec), "recover-µs/job")
	b.ReportMetric(perJob(wall), "wall-µs/job")
}
