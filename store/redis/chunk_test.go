package redis_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
)

// Every maintenance call that changes many jobs (or workers) runs its
// script on at most 100 of them at a time, so redis-server, which runs one
// script and nothing else, is never held for the whole call: 250 of them
// take three runs. Each case runs on a redis-server of its own, whose
// command statistics count only its scripts.
func TestMaintenanceRunsInChunks(t *testing.T) {
	t.Parallel()
	const n = 250
	now := storetest.Base
	later := now.Add(48 * time.Hour)
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, s *redis.Store)
		run   func(t *testing.T, s *redis.Store) (int, error)
	}{
		{"promote", func(t *testing.T, s *redis.Store) { enqueue(t, s, n, store.JobSpec{RunAt: now.Add(time.Hour)}, now) },
			func(t *testing.T, s *redis.Store) (int, error) {
				return s.JobPromote(t.Context(), &store.JobPromoteParams{Limit: store.MaxBatch, Now: later})
			}},
		{"prune jobs", func(t *testing.T, s *redis.Store) {
			enqueue(t, s, n, store.JobSpec{}, now)
			jobs, err := s.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: "w", Queues: []string{"default"}, Max: n, Now: now})
			if err != nil || len(jobs) != n {
				t.Fatalf("lease: %d, %v", len(jobs), err)
			}
			p := &store.JobSettleParams{Now: now}
			for _, j := range jobs {
				p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
			}
			if _, err := s.JobSettle(t.Context(), p); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, s *redis.Store) (int, error) {
			return s.JobPrune(t.Context(), &store.JobPruneParams{SucceededBefore: later, DeadBefore: later, Limit: store.MaxBatch, Now: later})
		}},
		{"prune workers", func(t *testing.T, s *redis.Store) {
			for i := range n {
				if _, err := s.WorkerRegister(t.Context(), &store.WorkerRegisterParams{ID: fmt.Sprint("w-", i), Now: now}); err != nil {
					t.Fatal(err)
				}
			}
		}, func(t *testing.T, s *redis.Store) (int, error) {
			return s.WorkerPrune(t.Context(), &store.WorkerPruneParams{SilentBefore: later, Limit: store.MaxBatch})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := storetest.StartRedis(t)
			s := open(t, srv.URL(), "")
			c.setup(t, s)
			before := evalCalls(t, srv.URL())
			got, err := c.run(t, s)
			if err != nil || got != n {
				t.Fatalf("%s = %d, %v; want %d", c.name, got, err, n)
			}
			if runs := evalCalls(t, srv.URL()) - before; runs != 3 {
				t.Errorf("%s of %d ran %d scripts, want 3", c.name, n, runs)
			}
		})
	}
}

func enqueue(t *testing.T, s *redis.Store, n int, spec store.JobSpec, now time.Time) {
	t.Helper()
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = spec
		specs[i].Kind = "k"
		specs[i].Normalize(now)
	}
	if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
}
