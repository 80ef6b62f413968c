package redis_test

import (
	"testing"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

func TestInsightsContract(t *testing.T) {
	url := testURL(t)
	storetest.RunInsights(t, func(t *testing.T) storetest.InsightsStore { return open(t, url, "") })
}

// Jobs that died in the same millisecond tie on their score: more of them
// than one call examines still page through, each once, across queues.
func TestDeadTies(t *testing.T) {
	url := testURL(t)
	s := open(t, url, "")
	ctx := t.Context()
	now := storetest.Base
	const perQueue = 1100
	for _, q := range []string{"a", "b"} {
		specs := make([]store.JobSpec, perQueue)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "k", Queue: q}
		}
		if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	var fails []store.JobFailParams
	for len(fails) < 2*perQueue {
		jobs, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"a", "b"}, Max: 500, Now: now})
		if err != nil || len(jobs) == 0 {
			t.Fatalf("lease: %d jobs, %v", len(jobs), err)
		}
		for _, j := range jobs {
			fails = append(fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "x", NoRetry: true})
		}
	}
	if _, err := s.JobSettle(ctx, &store.JobSettleParams{Fails: fails, Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 700} {
		seen := map[string]bool{}
		var last string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("the list did not end")
			}
			page, err := s.JobListDead(ctx, &store.JobListDeadParams{Limit: limit, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range page.Jobs {
				if seen[j.ID] {
					t.Fatalf("limit %d: %s listed twice", limit, j.ID)
				}
				if last != "" && j.ID > last {
					t.Fatalf("limit %d: %s after %s: ties go newest id first", limit, j.ID, last)
				}
				seen[j.ID], last = true, j.ID
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		if len(seen) != 2*perQueue {
			t.Errorf("limit %d: listed %d dead jobs, want %d", limit, len(seen), 2*perQueue)
		}
	}
}
