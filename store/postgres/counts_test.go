package postgres_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/storetest"
)

// The queue counts come from trigger-kept deltas folded once a tick, not
// from a scan: after a long mixed workload through every transition, with
// and without a fold pending, they must equal a full count.
func TestCountsMatchScan(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := storetest.Base
	rng := rand.New(rand.NewPCG(3, 4))
	queues := []string{"a", "b:c"}
	var held []*store.Job
	for step := range 500 {
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		q := queues[rng.IntN(len(queues))]
		var err error
		switch rng.IntN(11) {
		case 0, 1:
			specs := make([]store.JobSpec, 1+rng.IntN(5))
			for i := range specs {
				specs[i] = store.JobSpec{Queue: q, Kind: "k", MaxAttempts: 2,
					RunAt: now.Add(time.Duration(rng.IntN(3)) * time.Second)}
				if rng.IntN(4) == 0 {
					key := fmt.Sprint("u", rng.IntN(5))
					specs[i].UniqueKey = &key
				}
			}
			_, err = s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now})
		case 2, 3:
			var jobs []*store.Job
			jobs, err = s.JobLease(ctx, &store.JobLeaseParams{WorkerID: fmt.Sprint("w", rng.IntN(2)), Queues: []string{q}, Max: 3, Now: now})
			held = append(held, jobs...)
		case 4:
			p := &store.JobSettleParams{Now: now}
			for _, j := range held {
				if rng.IntN(2) == 0 {
					p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
				} else {
					p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "x", NoRetry: rng.IntN(3) == 0})
				}
			}
			held = nil
			_, err = s.JobSettle(ctx, p)
		case 5:
			if len(held) > 0 {
				j := held[0]
				held = held[1:]
				s.JobRelease(ctx, &store.JobReleaseParams{ID: j.ID, Token: j.Lease.Token, Now: now})
			}
		case 6:
			var orphans []store.Orphan
			orphans, err = s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-2 * time.Second)})
			if err == nil {
				_, err = s.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "n", Now: now})
			}
			if err == nil {
				_, err = s.JobReap(ctx, &store.JobReapParams{Now: now.Add(time.Hour)})
			}
		case 7:
			_, err = s.JobPromote(ctx, &store.JobPromoteParams{Now: now})
			if err == nil {
				_, err = s.CountFold(ctx, &store.CountFoldParams{})
			}
		case 8:
			list, _ := s.JobList(ctx, &store.JobListParams{Queue: q, Limit: 5})
			for _, j := range list {
				switch rng.IntN(4) {
				case 0:
					s.JobCancel(ctx, &store.JobCancelParams{ID: j.ID, Now: now})
				case 1:
					s.JobRetry(ctx, &store.JobRetryParams{ID: j.ID, Now: now})
				case 2:
					s.JobDelete(ctx, &store.JobDeleteParams{ID: j.ID})
				case 3:
					s.JobRun(ctx, &store.JobRunParams{ID: j.ID, Now: now})
				}
			}
		case 9:
			if step%5 == 0 {
				_, err = s.JobPrune(ctx, &store.JobPruneParams{SucceededBefore: now, DeadBefore: now, Now: now})
			}
		case 10:
			s.WorkerDeregister(ctx, &store.WorkerDeregisterParams{ID: fmt.Sprint("w", rng.IntN(2)), Now: now})
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	// Once with deltas pending, once folded.
	wantCounts(t, s, now)
	if _, err := s.CountFold(ctx, &store.CountFoldParams{}); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, now)
}

func wantCounts(t *testing.T, s *postgres.Store, now time.Time) {
	t.Helper()
	want, err := s.ScanCountsForTest(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the workload left no jobs: it tests nothing")
	}
	list, err := s.QueueList(t.Context(), &store.QueueListParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, q := range list {
		for st, n := range q.Counts {
			if n != 0 {
				got[q.Name+"/"+string(st)] = n
			}
		}
		if q.Retrying != 0 {
			got[q.Name+"/retrying"] = q.Retrying
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("maintained counts %v\nscanned          %v", got, want)
	}
	stats, err := s.StatsGet(t.Context(), &store.StatsGetParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range store.States {
		var sum int64
		for _, q := range list {
			sum += q.Counts[st]
		}
		if stats.Jobs[st] != sum {
			t.Errorf("stats %s = %d, queues sum to %d", st, stats.Jobs[st], sum)
		}
	}
}
