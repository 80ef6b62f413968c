package scheduler_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
)

// BenchmarkTickHistory measures one scheduler tick beside a history of
// finished jobs (TETHER_BENCH_HISTORY, default 1,000,000), run through the
// work queue and acked at one instant T, on each backend:
//
//   - idle: ticks an hour after T, with nothing to prune: what an idle
//     server spends on each tick, once a second by default (cpu-pct is the
//     tick's time over that second; the tick runs on one goroutine);
//   - pruning: ticks 25 hours after T, every job past retention: each tick
//     prunes 10,000 jobs.
//
// While a tick runs, a probe writes (registers a worker) again and again;
// probe-max-ms is its longest write, which is how long the tick made the
// store's writers wait (on SQLite, the one writer: a few ms at most).
//
//	TETHER_BENCH_BIG=1 TETHER_BENCH_HISTORY=1000000 go test -run '^$' -bench TickHistory -benchtime 20x -timeout 60m ./scheduler/
func BenchmarkTickHistory(b *testing.B) {
	if os.Getenv("TETHER_BENCH_BIG") != "1" {
		b.Skip("set TETHER_BENCH_BIG=1 to build a history of finished jobs (minutes) and measure")
	}
	history := 1_000_000
	if v := os.Getenv("TETHER_BENCH_HISTORY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("TETHER_BENCH_HISTORY=%q: want a number of jobs, at least 1000", v)
		}
		history = n
	}
	eachBackend(b, func(b *testing.B, open func(b *testing.B) store.Store) {
		st := open(b)
		at := time.Now().Add(-72 * time.Hour).Truncate(time.Millisecond)
		buildHistory(b, st, history, func() time.Time { return at })
		var clock atomic.Pointer[time.Time]
		clock.Store(&at)
		sched, err := scheduler.New(scheduler.Config{Store: st, NodeID: "bench-node",
			Now: func() time.Time { return *clock.Load() }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		for _, phase := range []struct {
			name  string
			after time.Duration
		}{{"idle", time.Hour}, {"pruning", 25 * time.Hour}} {
			now := at.Add(phase.after)
			clock.Store(&now)
			b.Run(phase.name, func(b *testing.B) { benchTicks(b, st, sched, now) })
		}
	})
}

// benchTicks runs one tick per iteration with the probe writing beside it,
// and reports the median tick and the probe's longest write.
func benchTicks(b *testing.B, st store.Store, sched *scheduler.Scheduler, now time.Time) {
	var ticks []time.Duration
	var longest time.Duration
	for b.Loop() {
		stop := make(chan struct{})
		var probe time.Duration
		var wg sync.WaitGroup
		wg.Go(func() { probe = probeWrites(b, st, now, stop) })
		began := time.Now()
		sched.Tick(context.Background())
		ticks = append(ticks, time.Since(began))
		close(stop)
		wg.Wait()
		longest = max(longest, probe)
	}
	slices.Sort(ticks)
	tick := ticks[len(ticks)/2]
	b.ReportMetric(ms(tick), "tick-ms")
	b.ReportMetric(100*tick.Seconds()/scheduler.DefaultTick.Seconds(), "cpu-pct")
	b.ReportMetric(ms(longest), "probe-max-ms")
}

// probeWrites registers a worker until stop is closed and returns its
// longest write.
func probeWrites(b *testing.B, st store.Store, now time.Time, stop <-chan struct{}) time.Duration {
	var longest time.Duration
	for {
		select {
		case <-stop:
			return longest
		default:
		}
		began := time.Now()
		if _, err := st.WorkerRegister(context.Background(), &store.WorkerRegisterParams{ID: "probe", Now: now}); err != nil {
			b.Error(err)
			return longest
		}
		longest = max(longest, time.Since(began))
	}
}
