package scheduler_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

// The scale benchmarks run the real scheduler (scheduler.Run, real time)
// over each backend, as a server does. They are benchmarks, not tests: what
// they report is how long things took on this machine, and make test never
// runs them (its -run and -bench defaults skip every benchmark). Run one
// backend with -bench 'Rescue/postgres'; Postgres needs
// TETHER_TEST_POSTGRES_URL (scripts/postgres.sh) and Redis a redis-server
// on the PATH (each sub-benchmark starts its own); a backend without its
// server is skipped.

// scaleBackend opens an empty store of one backend, closed (and dropped) at
// the benchmark's end.
type scaleBackend struct {
	name string
	open func(b *testing.B) store.Store
}

var scaleBackends = []scaleBackend{
	{"sqlite", func(b *testing.B) store.Store {
		st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "tether.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}},
	{"postgres", func(b *testing.B) store.Store {
		st, err := postgres.Open(context.Background(), storetest.PostgresSchema(b, "tether_scale"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}},
	{"redis", func(b *testing.B) store.Store {
		srv := storetest.StartRedis(b)
		st, err := redis.Open(context.Background(), srv.URL())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}},
}

// eachBackend runs bench once per backend, as a sub-benchmark.
func eachBackend(b *testing.B, bench func(b *testing.B, open func(b *testing.B) store.Store)) {
	for _, bk := range scaleBackends {
		b.Run(bk.name, func(b *testing.B) { bench(b, bk.open) })
	}
}

// fill enqueues n jobs of queue in batches of 1,000 at now.
func fill(b *testing.B, st store.Store, queue string, n int, now time.Time) {
	b.Helper()
	for done := 0; done < n; done += store.MaxBatch {
		specs := make([]store.JobSpec, min(store.MaxBatch, n-done))
		for i := range specs {
			specs[i] = store.JobSpec{Queue: queue, Kind: "bench", Payload: []byte(`{"n":1}`)}
			specs[i].Normalize(now)
		}
		if _, err := st.JobEnqueue(context.Background(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			b.Fatal(err)
		}
	}
}

// median of durations (which it sorts).
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func workerName(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }
