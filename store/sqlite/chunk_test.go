package sqlite_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

// Every maintenance call of the scheduler writes in transactions of at most
// WriteChunk rows, so a call of 1,000 never holds the one writer for the
// whole of it: the leases and settles waiting behind it go between two
// chunks. Each case makes 2 chunks and a half of work and expects it done
// in three transactions.
func TestMaintenanceWritesInChunks(t *testing.T) {
	t.Parallel()
	const n = 2*sqlite.WriteChunk + sqlite.WriteChunk/2
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := now.Add(48 * time.Hour)
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, s *sqlite.Store)
		run   func(t *testing.T, s *sqlite.Store) (int, error)
	}{
		{"recover", func(t *testing.T, s *sqlite.Store) { leased(t, s, n, store.JobSpec{}, now) },
			func(t *testing.T, s *sqlite.Store) (int, error) {
				orphans, err := s.JobListOrphans(t.Context(), &store.JobListOrphansParams{DeadBefore: later, Limit: store.MaxBatch})
				if err != nil || len(orphans) != n {
					t.Fatalf("list orphans: %d, %v; want %d", len(orphans), err, n)
				}
				won, err := s.JobRecover(t.Context(), &store.JobRecoverParams{Orphans: orphans, NodeID: "node", MaxRescues: 5, Now: later})
				return len(won), err
			}},
		{"reap", func(t *testing.T, s *sqlite.Store) { leased(t, s, n, store.JobSpec{Timeout: time.Second}, now) },
			func(t *testing.T, s *sqlite.Store) (int, error) {
				jobs, err := s.JobReap(t.Context(), &store.JobReapParams{Limit: store.MaxBatch, Now: later})
				return len(jobs), err
			}},
		{"promote", func(t *testing.T, s *sqlite.Store) { enqueued(t, s, n, store.JobSpec{RunAt: now.Add(time.Hour)}, now) },
			func(t *testing.T, s *sqlite.Store) (int, error) {
				return s.JobPromote(t.Context(), &store.JobPromoteParams{Limit: store.MaxBatch, Now: later})
			}},
		{"prune jobs", func(t *testing.T, s *sqlite.Store) { acked(t, s, leased(t, s, n, store.JobSpec{}, now), now) },
			func(t *testing.T, s *sqlite.Store) (int, error) {
				return s.JobPrune(t.Context(), &store.JobPruneParams{SucceededBefore: later, DeadBefore: later, Limit: store.MaxBatch, Now: later})
			}},
		{"prune keys", func(t *testing.T, s *sqlite.Store) {
			for i := range n {
				_, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs(1, store.JobSpec{}, now),
					IdempotencyKey: fmt.Sprint("key-", i), RequestHash: "h", IdempotencyTTL: time.Hour, Now: now})
				if err != nil {
					t.Fatal(err)
				}
			}
		}, func(t *testing.T, s *sqlite.Store) (int, error) {
			return s.KeyPrune(t.Context(), &store.KeyPruneParams{Limit: store.MaxBatch, Now: later})
		}},
		{"prune workers", func(t *testing.T, s *sqlite.Store) {
			for i := range n {
				if _, err := s.WorkerRegister(t.Context(), &store.WorkerRegisterParams{ID: fmt.Sprint("w-", i), Now: now}); err != nil {
					t.Fatal(err)
				}
			}
		}, func(t *testing.T, s *sqlite.Store) (int, error) {
			return s.WorkerPrune(t.Context(), &store.WorkerPruneParams{SilentBefore: later, Limit: store.MaxBatch})
		}},
		{"prune nodes", func(t *testing.T, s *sqlite.Store) {
			for i := range n {
				err := s.NodeHeartbeat(t.Context(), &store.NodeHeartbeatParams{ID: fmt.Sprint("node-", i), StartedAt: now, Now: now})
				if err != nil {
					t.Fatal(err)
				}
			}
		}, func(t *testing.T, s *sqlite.Store) (int, error) {
			return s.NodePrune(t.Context(), &store.NodePruneParams{SilentBefore: later, Limit: store.MaxBatch})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			c.setup(t, s)
			// A rescue's transactions end by time (rescueShare): none of it
			// here, so each takes one step of RescueStep.
			s.SetRescueHoldForTest(func(time.Duration) time.Duration { return 0 })
			var txs atomic.Int32
			s.SetWriteHookForTest(func(time.Duration) { txs.Add(1) })
			got, err := c.run(t, s)
			if err != nil || got != n {
				t.Fatalf("%s = %d, %v; want %d", c.name, got, err, n)
			}
			if txs.Load() != 3 {
				t.Errorf("%s of %d wrote in %d transactions, want 3 of at most %d", c.name, n, txs.Load(), sqlite.WriteChunk)
			}
		})
	}
}

// A rescue transaction goes on taking steps for three quarters of the time
// the rescue waited for the writer (between rescueMinHold and
// rescueMaxHold), so with live workers writing it takes less than half of
// the writer's time: held as long as it likes, a rescue of 2.5 steps is
// one transaction.
func TestRescueHoldsTheWriterForAShareOfItsWait(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ waited, want time.Duration }{
		{0, 5 * time.Millisecond},
		{20 * time.Millisecond, 15 * time.Millisecond},
		{time.Second, 50 * time.Millisecond},
	} {
		if got := sqlite.RescueShare(c.waited); got != c.want {
			t.Errorf("rescueShare(%s) = %s, want %s", c.waited, got, c.want)
		}
	}
	const n = 2*sqlite.RescueStep + sqlite.RescueStep/2
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := now.Add(time.Hour)
	s := open(t)
	leased(t, s, n, store.JobSpec{}, now)
	s.SetRescueHoldForTest(func(time.Duration) time.Duration { return time.Hour })
	var txs atomic.Int32
	s.SetWriteHookForTest(func(time.Duration) { txs.Add(1) })
	orphans, err := s.JobListOrphans(t.Context(), &store.JobListOrphansParams{DeadBefore: later, Limit: store.MaxBatch})
	if err != nil || len(orphans) != n {
		t.Fatalf("list orphans: %d, %v; want %d", len(orphans), err, n)
	}
	won, err := s.JobRecover(t.Context(), &store.JobRecoverParams{Orphans: orphans, NodeID: "node", MaxRescues: 5, Now: later})
	if err != nil || len(won) != n {
		t.Fatalf("recover = %d, %v; want %d", len(won), err, n)
	}
	if txs.Load() != 1 {
		t.Errorf("a rescue of %d held as long as it likes wrote in %d transactions, want 1", n, txs.Load())
	}
}

// A rescue transaction takes another step only if one as long as the last
// still ends within its budget, so it does not overrun it by part of a step.
func TestRescueStopsBeforeAStepPastItsBudget(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		held, step, budget time.Duration
		want               bool
	}{
		{2 * ms, 2 * ms, 10 * ms, true},
		{6 * ms, 4 * ms, 10 * ms, true},  // the next step ends at the budget
		{7 * ms, 4 * ms, 10 * ms, false}, // it would end 1 ms past it
		{12 * ms, 1 * ms, 10 * ms, false},
		{0, 0, 0, true}, // a step that takes no time never overruns
		{3 * ms, 3 * ms, 0, false},
	} {
		if got := sqlite.RescueGoesOn(c.held, c.step, c.budget); got != c.want {
			t.Errorf("rescueGoesOn(held %s, step %s, budget %s) = %t, want %t", c.held, c.step, c.budget, got, c.want)
		}
	}
}

// specs returns n copies of spec, normalized at now.
func specs(n int, spec store.JobSpec, now time.Time) []store.JobSpec {
	out := make([]store.JobSpec, n)
	for i := range out {
		out[i] = spec
		out[i].Kind = "k"
		out[i].Normalize(now)
	}
	return out
}

func enqueued(t testing.TB, s *sqlite.Store, n int, spec store.JobSpec, now time.Time) {
	t.Helper()
	if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs(n, spec, now), Now: now}); err != nil {
		t.Fatal(err)
	}
}

// leased enqueues n jobs of spec and leases them all as worker w.
func leased(t testing.TB, s *sqlite.Store, n int, spec store.JobSpec, now time.Time) []*store.Job {
	t.Helper()
	enqueued(t, s, n, spec, now)
	jobs, err := s.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: "w", Queues: []string{store.DefaultQueue}, Max: n, Now: now})
	if err != nil || len(jobs) != n {
		t.Fatalf("lease: %d jobs, %v; want %d", len(jobs), err, n)
	}
	return jobs
}

func acked(t testing.TB, s *sqlite.Store, jobs []*store.Job, now time.Time) {
	t.Helper()
	p := &store.JobSettleParams{Now: now}
	for _, j := range jobs {
		p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
	}
	if _, err := s.JobSettle(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}
