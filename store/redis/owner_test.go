package redis_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// The seed's Redis claim was one string "{owner}:{ts}" parsed on the first
// ':': an owner such as "host:1234" read as owner "host", whose heartbeat
// never existed, so live workers' jobs were listed as orphans and
// rescued from under them. These tests would have caught it.

// colonOwners are owner ids with the separators that key and claim schemes
// trip on, including one that is a prefix of another.
var colonOwners = []string{"10.0.0.5:8080:w-3", "a", "a:1", "host:1234", "user@host:99/w"}

// leaseEach has each owner lease one job of its own queue and returns the
// jobs by owner.
func leaseEach(t *testing.T, s store.Store, owners []string, now time.Time) map[string]*store.Job {
	t.Helper()
	jobs := map[string]*store.Job{}
	for i, w := range owners {
		q := fmt.Sprintf("q%d", i)
		if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k", Queue: q}}, Now: now}); err != nil {
			t.Fatal(err)
		}
		got, err := s.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: w, Queues: []string{q}, Max: 1, Now: now})
		if err != nil || len(got) != 1 {
			t.Fatalf("lease for %q: %d jobs, %v", w, len(got), err)
		}
		if got[0].Lease.WorkerID != w {
			t.Fatalf("lease owner = %q, want %q", got[0].Lease.WorkerID, w)
		}
		jobs[w] = got[0]
	}
	return jobs
}

func heartbeat(t *testing.T, s store.Store, w string, now time.Time, inFlight ...string) *store.WorkerHeartbeatResult {
	t.Helper()
	res, err := s.WorkerHeartbeat(t.Context(), &store.WorkerHeartbeatParams{ID: w, InFlight: inFlight, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func listOrphans(t *testing.T, s store.Store, deadBefore time.Time) []store.Orphan {
	t.Helper()
	got, err := s.JobListOrphans(t.Context(), &store.JobListOrphansParams{DeadBefore: deadBefore, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestColonOwnersLiveAreNotOrphans: owners with ':' that keep
// heartbeating are never listed as orphans, however long they hold jobs.
func TestColonOwnersLiveAreNotOrphans(t *testing.T) {
	t.Parallel()
	s := open(t, testURL(t), "")
	now := storetest.Base
	jobs := leaseEach(t, s, colonOwners, now)
	for range 10 {
		now = now.Add(10 * time.Second)
		for _, w := range colonOwners {
			if res := heartbeat(t, s, w, now, jobs[w].ID); len(res.Lost) != 0 {
				t.Fatalf("%q lost %q while alive", w, res.Lost)
			}
		}
		if o := listOrphans(t, s, now.Add(-store.DefaultDeadAfter)); len(o) != 0 {
			t.Fatalf("live owners listed as orphans: %+v", o)
		}
	}
	// The stored owner is the whole id, in a field of its own.
	for _, w := range colonOwners {
		got, err := s.JobGet(t.Context(), &store.JobGetParams{ID: jobs[w].ID})
		if err != nil || got.Lease == nil || got.Lease.WorkerID != w || got.Lease.Token != jobs[w].Lease.Token {
			t.Errorf("job of %q reads back with lease %+v, %v", w, got.Lease, err)
		}
	}
}

// TestColonOwnersOneDies: of "a" and "a:1" (and the others), exactly the
// silent one's job is an orphan, whichever it is.
func TestColonOwnersOneDies(t *testing.T) {
	t.Parallel()
	for _, dead := range colonOwners {
		t.Run(dead, func(t *testing.T) {
			t.Parallel()
			s := open(t, testURL(t), "")
			now := storetest.Base
			jobs := leaseEach(t, s, colonOwners, now)
			now = now.Add(10 * time.Second)
			for _, w := range colonOwners {
				if w != dead {
					heartbeat(t, s, w, now)
				}
			}
			now = now.Add(10 * time.Second)
			o := listOrphans(t, s, now.Add(-store.DefaultDeadAfter))
			if len(o) != 1 || o[0].WorkerID != dead || o[0].JobID != jobs[dead].ID || o[0].Token != jobs[dead].Lease.Token {
				t.Fatalf("orphans = %+v, want only %s of %q", o, jobs[dead].ID, dead)
			}
			won, err := s.JobRecover(t.Context(), &store.JobRecoverParams{Orphans: o, NodeID: "node:1", Now: now})
			if err != nil || len(won) != 1 {
				t.Fatalf("recover: %d, %v", len(won), err)
			}
			for _, w := range colonOwners {
				res := heartbeat(t, s, w, now)
				if want := w == dead; want != slices.Contains(res.Lost, jobs[w].ID) {
					t.Errorf("%q lost %q; its job %s lost = %v", w, res.Lost, jobs[w].ID, want)
				}
				j, _ := s.JobGet(t.Context(), &store.JobGetParams{ID: jobs[w].ID})
				if want := map[bool]store.State{true: store.StateAvailable, false: store.StateRunning}[w == dead]; j.State != want {
					t.Errorf("job of %q is %s, want %s", w, j.State, want)
				}
			}
		})
	}
}

// TestColonOwnersAllDie: every silent owner's job recovers, recorded under
// the whole owner id, and is reported lost to that owner alone.
func TestColonOwnersAllDie(t *testing.T) {
	t.Parallel()
	s := open(t, testURL(t), "")
	now := storetest.Base
	jobs := leaseEach(t, s, colonOwners, now)
	now = now.Add(time.Minute)
	o := listOrphans(t, s, now.Add(-store.DefaultDeadAfter))
	owners := map[string]string{}
	for _, x := range o {
		owners[x.JobID] = x.WorkerID
	}
	for _, w := range colonOwners {
		if owners[jobs[w].ID] != w {
			t.Errorf("orphan %s listed with owner %q, want %q", jobs[w].ID, owners[jobs[w].ID], w)
		}
	}
	won, err := s.JobRecover(t.Context(), &store.JobRecoverParams{Orphans: o, NodeID: "10.0.0.9:7000", Now: now})
	if err != nil || len(won) != len(colonOwners) {
		t.Fatalf("recovered %d of %d: %v", len(won), len(colonOwners), err)
	}
	for _, w := range colonOwners {
		j, err := s.JobGet(t.Context(), &store.JobGetParams{ID: jobs[w].ID})
		if err != nil {
			t.Fatal(err)
		}
		a := j.Attempts[len(j.Attempts)-1]
		if j.State != store.StateAvailable || a.Outcome != store.OutcomeOrphaned || a.WorkerID != w ||
			a.RecoveredBy == nil || *a.RecoveredBy != "10.0.0.9:7000" {
			t.Errorf("job of %q: %s, attempt %+v", w, j.State, a)
		}
		if res := heartbeat(t, s, w, now); !slices.Equal(res.Lost, []string{jobs[w].ID}) {
			t.Errorf("%q lost %q, want only %s", w, res.Lost, jobs[w].ID)
		}
	}
}

// TestRecoverThreeStores: three replicas (three Stores on one prefix)
// recover the same orphans at once; each job is rescued exactly once.
func TestRecoverThreeStores(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	first := open(t, url, "")
	prefix := first.PrefixForTest()
	replicas := []store.Store{first, open(t, url, prefix), open(t, url, prefix)}
	ctx := t.Context()
	now := storetest.Base
	const perRound = 50
	for round := range 10 {
		owner := fmt.Sprintf("10.0.0.5:8080:w-%d", round)
		specs := make([]store.JobSpec, perRound)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "k"}
		}
		if _, err := first.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			t.Fatal(err)
		}
		leased, err := first.JobLease(ctx, &store.JobLeaseParams{WorkerID: owner, Queues: []string{"default"}, Max: perRound, Now: now})
		if err != nil || len(leased) != perRound {
			t.Fatalf("leased %d, %v", len(leased), err)
		}
		now = now.Add(time.Minute)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			won   = map[string]int{}
			start = make(chan struct{})
		)
		for i, r := range replicas {
			wg.Go(func() {
				// Each replica lists for itself, as its scheduler would.
				o, err := r.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-store.DefaultDeadAfter), Limit: 1000})
				if err != nil {
					t.Error(err)
					return
				}
				<-start
				got, err := r.JobRecover(ctx, &store.JobRecoverParams{Orphans: o, NodeID: fmt.Sprintf("node-%d", i), Now: now})
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, j := range got {
					won[j.ID]++
				}
			})
		}
		close(start)
		wg.Wait()
		for _, l := range leased {
			if won[l.ID] != 1 {
				t.Errorf("round %d: job %s rescued %d times, want once", round, l.ID, won[l.ID])
			}
			j, err := first.JobGet(ctx, &store.JobGetParams{ID: l.ID})
			if err != nil {
				t.Fatal(err)
			}
			if j.State != store.StateAvailable || j.Rescues != 1 || len(j.Attempts) != 1 {
				t.Errorf("round %d: job %s %s rescues %d attempts %d, want available, 1, 1", round, l.ID, j.State, j.Rescues, len(j.Attempts))
			}
			// Leased again so the next round starts from an empty queue.
		}
		again, err := first.JobLease(ctx, &store.JobLeaseParams{WorkerID: "drain", Queues: []string{"default"}, Max: 1000, Now: now})
		if err != nil || len(again) != perRound {
			t.Fatalf("round %d: %d rescued jobs leasable, %v", round, len(again), err)
		}
		for _, j := range again {
			if _, err := first.JobAck(ctx, &store.JobAckParams{ID: j.ID, Token: j.Lease.Token, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		stats, err := first.StatsGet(ctx, &store.StatsGetParams{})
		if err != nil || stats.RescuesTotal != int64(perRound*(round+1)) {
			t.Fatalf("round %d: rescues_total %d, %v", round, stats.RescuesTotal, err)
		}
		if t.Failed() {
			return
		}
	}
}
