package sqlite_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The queue counts are kept by the store, not by a scan: after a long mixed
// workload through every transition they must equal a full count.
func TestCountsMatchScan(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	queues := []string{"a", "b:c"}
	var held []*store.Job
	for step := range 400 {
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		q := queues[rng.IntN(len(queues))]
		switch rng.IntN(10) {
		case 0, 1:
			specs := make([]store.JobSpec, 1+rng.IntN(5))
			for i := range specs {
				specs[i] = store.JobSpec{Queue: q, Kind: "k", RunAt: now.Add(time.Duration(rng.IntN(3)) * time.Second), MaxAttempts: 2}
			}
			if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
				t.Fatal(err)
			}
		case 2, 3:
			jobs, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{q}, Max: 3, Now: now})
			if err != nil {
				t.Fatal(err)
			}
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
			if len(p.Acks)+len(p.Fails) > 0 {
				if _, err := s.JobSettle(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
		case 5:
			if len(held) > 0 {
				j := held[0]
				held = held[1:]
				s.JobRelease(ctx, &store.JobReleaseParams{ID: j.ID, Token: j.Lease.Token, Now: now})
			}
		case 6:
			orphans, err := s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-2 * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			s.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "n", Now: now})
			s.JobReap(ctx, &store.JobReapParams{Now: now.Add(time.Hour)})
		case 7:
			s.JobPromote(ctx, &store.JobPromoteParams{Now: now})
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
				s.JobPrune(ctx, &store.JobPruneParams{SucceededBefore: now, DeadBefore: now, Now: now})
			}
		}
	}
	want, err := s.ScanCountsForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	queuesNow, err := s.QueueList(ctx, &store.QueueListParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, q := range queuesNow {
		for st, n := range q.Counts {
			if n != 0 {
				got[q.Name+"/"+string(st)] = n
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("the workload left no jobs: it tests nothing")
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: maintained %d, scanned %d", k, got[k], n)
		}
	}
	for k, n := range got {
		if want[k] != n {
			t.Errorf("%s: maintained %d, scanned %d", k, n, want[k])
		}
	}
}
