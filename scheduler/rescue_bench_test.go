package scheduler_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
)

// The shape of a bulk rescue: 100 workers holding 100 jobs each go silent
// at once, with a server ticking as fast as the process tests run it,
// while a few live workers go on leasing and acking in a queue of their
// own.
const (
	rescueWorkers   = 100
	rescuePerWorker = 100
	rescueDeadAfter = 2 * time.Second
	rescueTick      = 200 * time.Millisecond
	liveWorkers     = 4
	liveBatch       = 100
)

// BenchmarkRescue measures how long 10,000 jobs of 100 silent workers take
// to be available again, counted from the moment the first of the workers
// fell silent (so it includes DeadAfter, 2 s), and what the rescue costs the
// live workers meanwhile:
//
//   - back-s: seconds until all 10,000 are available (target: DeadAfter +
//     2 ticks, 2.4 s; at most DeadAfter + 1.5 s);
//   - live-ratio: the live workers' acked jobs per second from DeadAfter
//     until all are back, over their rate in the DeadAfter before (at
//     least 0.5);
//   - stall-ms: the longest lease-and-ack round of a live worker while the
//     rescue ran.
//
// Each iteration is a fresh store that first rescues 10 jobs 30 times
// (warmRescues), as a server that has run a while; the figures are medians
// over the iterations (-benchtime 5x for five):
//
//	go test -run '^$' -bench Rescue -benchtime 5x ./scheduler/
func BenchmarkRescue(b *testing.B) {
	eachBackend(b, func(b *testing.B, open func(b *testing.B) store.Store) {
		var backs, stalls []time.Duration
		var ratios []float64
		for b.Loop() {
			r := runRescue(b, open(b))
			backs, stalls, ratios = append(backs, r.back), append(stalls, r.stall), append(ratios, r.liveRatio)
		}
		b.ReportMetric(median(backs).Seconds(), "back-s")
		b.ReportMetric(ms(median(stalls)), "stall-ms")
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "live-ratio")
	})
}

type rescueResult struct {
	back      time.Duration // from the first silence to all jobs available
	stall     time.Duration // the longest live round during the rescue
	liveRatio float64       // live rate during the rescue over before it
}

func runRescue(b *testing.B, st store.Store) rescueResult {
	warmRescues(b, st)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sched, err := scheduler.New(scheduler.Config{Store: st, NodeID: "bench-node", Tick: rescueTick,
		DeadAfter: rescueDeadAfter, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()

	fill(b, st, "orphans", rescueWorkers*rescuePerWorker, time.Now())
	live := startLive(ctx, b, st, &wg)
	holdAndFallSilent(b, st)
	silentAt := time.Now()
	// The scheduler starts once every silent worker has sent its last
	// heartbeat: on a loaded machine the leases before it can take longer
	// than DeadAfter, and a scheduler already running would rescue the
	// first workers' jobs before the last ones leased.
	wg.Go(func() { sched.Run(ctx) })
	backAt := waitAllBack(b, st, silentAt.Add(30*time.Second))
	cancel()
	wg.Wait()

	stats, err := st.StatsGet(context.Background(), &store.StatsGetParams{Now: time.Now()})
	if want := int64(rescueWorkers*rescuePerWorker + 300); err != nil || stats.RescuesTotal != want {
		b.Fatalf("rescues total = %+v, %v; want %d (the warm-up's 300 besides)", stats, err, want)
	}
	detect := silentAt.Add(rescueDeadAfter)
	before := live.rate(silentAt, detect)
	during := live.rate(detect, backAt)
	return rescueResult{back: backAt.Sub(silentAt), stall: live.longest(detect, backAt), liveRatio: during / before}
}

// warmRescues rescues 10 jobs 30 times over, an hour in the past, as a
// server that has run a while has: Postgres plans a prepared statement
// generically from its sixth execution on a connection, and the pool's
// connections have each run the rescue's statements that often by then.
func warmRescues(b *testing.B, st store.Store) {
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	fill(b, st, "warm", 300, at)
	for i := range 30 {
		worker := workerName("warm", i)
		if _, err := st.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{"warm"}, Max: 10, Now: at}); err != nil {
			b.Fatal(err)
		}
		later := at.Add(rescueDeadAfter + time.Second)
		orphans, err := st.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: at, Limit: store.MaxBatch})
		if err != nil || len(orphans) != 10 {
			b.Fatalf("warm-up orphans: %d, %v", len(orphans), err)
		}
		if _, err := st.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "warm-node", MaxRescues: 100, Now: later}); err != nil {
			b.Fatal(err)
		}
		at = later
	}
}

// holdAndFallSilent has every rescue worker lease its jobs, then sends one
// last heartbeat for all of them at once (eight at a time), after which
// they are silent.
func holdAndFallSilent(b *testing.B, st store.Store) {
	ctx := context.Background()
	for i := range rescueWorkers {
		jobs, err := st.JobLease(ctx, &store.JobLeaseParams{WorkerID: workerName("silent", i), Queues: []string{"orphans"},
			Max: rescuePerWorker, Now: time.Now()})
		if err != nil || len(jobs) != rescuePerWorker {
			b.Fatalf("lease for silent worker %d: %d jobs, %v", i, len(jobs), err)
		}
	}
	var wg sync.WaitGroup
	ids := make(chan int, rescueWorkers)
	for i := range rescueWorkers {
		ids <- i
	}
	close(ids)
	for range 8 {
		wg.Go(func() {
			for i := range ids {
				if _, err := st.WorkerHeartbeat(ctx, &store.WorkerHeartbeatParams{ID: workerName("silent", i), Now: time.Now()}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// waitAllBack polls the orphans queue's counts until every job is
// available again and returns when it saw that.
func waitAllBack(b *testing.B, st store.Store, deadline time.Time) time.Time {
	for {
		qs, err := st.QueueList(context.Background(), &store.QueueListParams{Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		at := time.Now()
		for _, q := range qs {
			if q.Name == "orphans" && q.Counts[store.StateAvailable] == rescueWorkers*rescuePerWorker {
				return at
			}
		}
		if at.After(deadline) {
			b.Fatalf("the orphans were not all back by %s: %+v", deadline.Format(time.StampMilli), qs)
		}
		time.Sleep(5 * time.Millisecond) // polling counts another goroutine changes: no signal to wait on
	}
}

// liveLoad is the rounds of the live workers: each enqueues a batch, leases
// it and acks it.
type liveLoad struct {
	mu     sync.Mutex
	rounds []round
}

type round struct {
	start, end time.Time
	jobs       int
}

func startLive(ctx context.Context, b *testing.B, st store.Store, wg *sync.WaitGroup) *liveLoad {
	l := &liveLoad{}
	for i := range liveWorkers {
		worker := workerName("live", i)
		wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				n, err := liveRound(st, worker, start)
				if err != nil {
					if ctx.Err() == nil {
						b.Error(err)
					}
					return
				}
				l.mu.Lock()
				l.rounds = append(l.rounds, round{start, time.Now(), n})
				l.mu.Unlock()
			}
		})
	}
	return l
}

func liveRound(st store.Store, worker string, now time.Time) (int, error) {
	ctx := context.Background()
	specs := make([]store.JobSpec, liveBatch)
	for i := range specs {
		specs[i] = store.JobSpec{Queue: "live", Kind: "bench"}
		specs[i].Normalize(now)
	}
	if _, err := st.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		return 0, err
	}
	jobs, err := st.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{"live"}, Max: liveBatch, Now: now})
	if err != nil {
		return 0, err
	}
	p := &store.JobSettleParams{Now: now}
	for _, j := range jobs {
		p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
	}
	if _, err := st.JobSettle(ctx, p); err != nil {
		return 0, err
	}
	return len(jobs), nil
}

// rate is the jobs acked per second by rounds that ended within [from, to).
func (l *liveLoad) rate(from, to time.Time) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.rounds {
		if !r.end.Before(from) && r.end.Before(to) {
			n += r.jobs
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// longest is the longest round that overlapped [from, to).
func (l *liveLoad) longest(from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d time.Duration
	for _, r := range l.rounds {
		if r.end.After(from) && r.start.Before(to) {
			d = max(d, r.end.Sub(r.start))
		}
	}
	return d
}
