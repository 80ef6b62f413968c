package sqlite_test

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

// BenchmarkTickWriterHold measures how long each of a scheduler tick's
// write transactions holds SQLite's one writer, beside a history of
// finished jobs (TETHER_BENCH_HISTORY, default 1,000,000) run through the
// store and acked at one instant T:
//
//   - idle: ticks an hour after T, nothing to prune;
//   - pruning: ticks 25 hours after T, every job past retention (each tick
//     prunes 10,000).
//
// hold-max-ms is the longest hold of all the ticks' transactions (the wait
// a lease or a settle can meet behind a tick), hold-p99-ms the 99th
// percentile, tick-ms the median tick. Building a million jobs takes a
// couple of minutes:
//
//	TETHER_BENCH_BIG=1 go test -run '^$' -bench TickWriterHold -benchtime 20x -timeout 30m ./store/sqlite/
func BenchmarkTickWriterHold(b *testing.B) {
	if os.Getenv("TETHER_BENCH_BIG") != "1" {
		b.Skip("set TETHER_BENCH_BIG=1 to build a history of finished jobs (minutes) and measure")
	}
	history := 1_000_000
	if v := os.Getenv("TETHER_BENCH_HISTORY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < store.MaxBatch {
			b.Fatalf("TETHER_BENCH_HISTORY=%q: want a number of jobs, at least %d", v, store.MaxBatch)
		}
		history = n
	}
	s := open(b)
	at := time.Now().Add(-72 * time.Hour).Truncate(time.Millisecond)
	for done := 0; done < history; done += store.MaxBatch {
		acked(b, s, leased(b, s, min(store.MaxBatch, history-done), store.JobSpec{}, at), at)
	}
	var mu sync.Mutex
	var holds []time.Duration
	s.SetWriteHookForTest(func(d time.Duration) {
		mu.Lock()
		holds = append(holds, d)
		mu.Unlock()
	})
	now := at
	sched, err := scheduler.New(scheduler.Config{Store: s, NodeID: "bench-node", Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	for _, phase := range []struct {
		name  string
		after time.Duration
	}{{"idle", time.Hour}, {"pruning", 25 * time.Hour}} {
		now = at.Add(phase.after)
		b.Run(phase.name, func(b *testing.B) {
			holds = nil
			var ticks []time.Duration
			for b.Loop() {
				began := time.Now()
				sched.Tick(context.Background())
				ticks = append(ticks, time.Since(began))
			}
			slices.Sort(ticks)
			slices.Sort(holds)
			b.ReportMetric(float64(ticks[len(ticks)/2])/1e6, "tick-ms")
			b.ReportMetric(float64(holds[len(holds)-1])/1e6, "hold-max-ms")
			b.ReportMetric(float64(holds[len(holds)*99/100])/1e6, "hold-p99-ms")
			b.Logf("%d transactions, the longest: %v", len(holds), holds[max(0, len(holds)-5):])
		})
	}
}
