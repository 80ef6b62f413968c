package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

func itoa(n int) string { return strconv.Itoa(n) }

// TestDurabilityKill9: with appendonly yes and appendfsync always, a
// redis-server killed with SIGKILL in the middle of concurrent enqueues
// loses none that were acknowledged. The control run, without the AOF,
// shows that the check does see losses.
func TestDurabilityKill9(t *testing.T) {
	t.Run("AppendfsyncAlways", func(t *testing.T) {
		missing, total := killDuringEnqueues(t, "--appendonly", "yes", "--appendfsync", "always")
		if missing > 0 {
			t.Fatalf("%d of %d acknowledged enqueues lost to kill -9", missing, total)
		}
	})
	t.Run("ControlNoPersistence", func(t *testing.T) {
		if missing, total := killDuringEnqueues(t, "--appendonly", "no"); missing == 0 {
			t.Fatalf("without persistence all %d enqueues survived kill -9: the check cannot see a loss", total)
		}
	})
}

// killDuringEnqueues kills redis-server (started with args) with SIGKILL
// while producers enqueue, restarts it on the same directory, lets them
// go on, and returns how many acknowledged jobs are missing, of how many.
func killDuringEnqueues(t *testing.T, args ...string) (missing, total int) {
	srv := storetest.StartRedis(t, args...)
	s := open(t, srv.URL(), "")
	ctx := t.Context()

	const producers = 8
	var (
		mu     sync.Mutex
		acked  []string
		failed atomic.Int64
		wg     sync.WaitGroup
		stop   atomic.Bool
	)
	for p := range producers {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				// Batches of 1 and of 10 alike: a batch is one script, all or none.
				n := 1 + 9*(i%2)
				specs := make([]store.JobSpec, n)
				for k := range specs {
					specs[k] = store.JobSpec{Kind: "k", Payload: []byte(fmt.Sprintf(`{"p":%d,"i":%d,"k":%d}`, p, i, k))}
				}
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				res, err := s.JobEnqueue(cctx, &store.JobEnqueueParams{Jobs: specs, Now: storetest.Base})
				cancel()
				if err != nil {
					failed.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				for _, j := range res.Jobs {
					acked = append(acked, j.ID)
				}
				mu.Unlock()
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitFor(t, "enqueues before the kill", 30*time.Second, func() bool { return count() >= 1000 })
	srv.Kill9()
	before := count()
	waitFor(t, "producers to see the server gone", 10*time.Second, func() bool { return failed.Load() > 0 })
	srv.Start()
	waitFor(t, "enqueues after the restart", 30*time.Second, func() bool { return count() >= before+500 })
	stop.Store(true)
	wg.Wait()

	for _, id := range acked {
		if _, err := s.JobGet(ctx, &store.JobGetParams{ID: id}); err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			missing++
		}
	}
	t.Logf("%d acknowledged enqueues (%d before the kill), %d failed calls, %d missing", len(acked), before, failed.Load(), missing)
	return missing, len(acked)
}
