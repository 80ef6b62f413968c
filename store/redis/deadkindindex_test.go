package redis_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
)

// killed enqueues n jobs of kind in queue q, leases them and fails each
// for good at now + i ms (the i-th), and returns them newest dead first.
func killed(t *testing.T, s *redis.Store, q, kind string, n int, now time.Time) []*store.Job {
	t.Helper()
	ctx := t.Context()
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: kind, Queue: q}
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{q}, Max: n, Now: now})
	if err != nil || len(leased) != n {
		t.Fatalf("lease: %d jobs, %v", len(leased), err)
	}
	out := make([]*store.Job, n)
	for i, j := range leased {
		out[n-1-i], err = s.JobFail(ctx, &store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "x", NoRetry: true,
			Now: now.Add(time.Duration(i) * time.Millisecond)})
		if err != nil || out[n-1-i].State != store.StateDead {
			t.Fatalf("fail: %+v, %v", out[n-1-i], err)
		}
	}
	return out
}

// deadOfKind lists the dead jobs of kind in every queue, page by page.
func deadOfKind(t *testing.T, s *redis.Store, kind string) []string {
	t.Helper()
	var out []string
	for cursor := ""; ; {
		page, err := s.JobListDead(t.Context(), &store.JobListDeadParams{Kind: kind, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, jobIDs(page.Jobs)...)
		if cursor = page.NextCursor; cursor == "" {
			return out
		}
	}
}

// TestDeadKindIndexUpgrade: a store an earlier version wrote has dead jobs
// but no dead sets by kind. Open builds them, over more entries than one
// step checks, and records it; an entry of a job that is not dead (left by
// an earlier version beside this one) is not listed.
func TestDeadKindIndexUpgrade(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	s := open(t, url, "")
	ctx := t.Context()
	now := storetest.Base
	xs := killed(t, s, "q", "x", 2, now)
	ys := killed(t, s, "q", "y", redis.ReindexBatch+50, now.Add(time.Second))
	ys = append(ys, killed(t, s, "r", "y", 3, now.Add(2*time.Second))...)
	slices.SortStableFunc(ys, func(a, b *store.Job) int { return b.FinishedAt.Compare(*a.FinishedAt) })
	live, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "x", Queue: "q"}}, Now: now})
	if err != nil {
		t.Fatal(err)
	}

	p, c := s.PrefixForTest(), raw(t, url)
	for _, cmd := range [][]any{
		{"DEL", p + "{q}:dk:x", p + "{q}:dk:y", p + "{r}:dk:y"},
		{"ZADD", p + "{q}:dk:x", unixMS(now.Add(time.Hour)), live.Jobs[0].ID}, // available, not dead
		{"SREM", p + "migrations", "dead-kind-index"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := deadOfKind(t, s, "x"); len(got) != 0 {
		t.Fatalf("before the upgrade, kind x lists %q: the sets were not removed", got)
	}
	s = open(t, url, p)
	if got := deadOfKind(t, s, "x"); !slices.Equal(got, jobIDs(xs)) {
		t.Errorf("kind x after the upgrade = %s, want %s", short(got), short(jobIDs(xs)))
	}
	if got := deadOfKind(t, s, "y"); !slices.Equal(got, jobIDs(ys)) {
		t.Errorf("kind y after the upgrade = %s, want %s", short(got), short(jobIDs(ys)))
	}
	if done, _ := c.SIsMember(ctx, p+"migrations", "dead-kind-index").Result(); !done {
		t.Error("the build is not recorded in migrations")
	}
}
