package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// deadOthers is how many dead jobs of another kind the kind filter's test
// puts in front of the few it looks for: more than the window a backend
// examines per call for a filter no index serves (5,000 rows on SQLite and
// Postgres, 1,000 entries on Redis), so a backend that filtered by kind
// within such a window would show empty pages, each offering a next one.
const deadOthers = 5_100

// killMany makes n dead jobs of spec, failed permanently, at the clock's
// instant, in batches as large as the store takes.
func (h *insights) killMany(n int, sp store.JobSpec) {
	h.t.Helper()
	for done := 0; done < n; done += store.MaxBatch {
		specs := make([]store.JobSpec, min(store.MaxBatch, n-done))
		for i := range specs {
			specs[i] = sp
		}
		h.enqueue(specs...)
		leased := h.lease("w", len(specs), sp.Queue)
		p := &store.JobSettleParams{Now: h.now()}
		for _, j := range leased {
			p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: token(h.t, j), Error: "x", NoRetry: true})
		}
		res, err := h.s.JobSettle(h.ctx, p)
		if err != nil || len(leased) != len(specs) || len(res) != len(specs) {
			h.t.Fatalf("kill %d jobs: leased %d, settled %d, %v", len(specs), len(leased), len(res), err)
		}
		for _, err := range res {
			if err != nil {
				h.t.Fatalf("kill: %v", err)
			}
		}
	}
}

// testInsightsDeadKind: a kind filter reads only the dead jobs of that
// kind. Behind more dead jobs of another kind than any window, its first
// page holds its newest match, no page is empty while a next one is
// offered, and a kind no dead job has ends the list on its first page. The
// filter follows the jobs out of dead (retry, delete, prune).
func testInsightsDeadKind(t *testing.T, h *insights) {
	old := h.running("w", spec("x", "a"))
	x1 := h.failNoRetry(old)
	h.advance(time.Second)
	x2 := h.failNoRetry(h.running("w", spec("x", "b")))
	h.advance(time.Second)
	h.killMany(deadOthers, spec("y", "a"))
	h.killMany(deadOthers/50, spec("y", "b"))
	h.advance(time.Second)

	list := func(p store.JobListDeadParams) []string {
		t.Helper()
		var out []string
		for cursor := ""; ; {
			q := p
			q.Cursor = cursor
			page, err := h.in.JobListDead(h.ctx, &q)
			if err != nil {
				t.Fatalf("JobListDead(%+v): %v", q, err)
			}
			if len(page.Jobs) == 0 && page.NextCursor != "" {
				t.Fatalf("JobListDead(%+v): an empty page offers a next one", q)
			}
			out = append(out, ids(page.Jobs)...)
			if cursor = page.NextCursor; cursor == "" {
				return out
			}
		}
	}
	for _, tt := range []struct {
		p    store.JobListDeadParams
		want []*store.Job
	}{
		{store.JobListDeadParams{Kind: "x"}, []*store.Job{x2, x1}},
		{store.JobListDeadParams{Kind: "x", Limit: 1}, []*store.Job{x2, x1}},
		{store.JobListDeadParams{Kind: "x", Queue: "a"}, []*store.Job{x1}},
		{store.JobListDeadParams{Kind: "x", Queue: "b", Limit: 1}, []*store.Job{x2}},
		{store.JobListDeadParams{Kind: "x", Reason: store.DeadFailedPermanently}, []*store.Job{x2, x1}},
		{store.JobListDeadParams{Kind: "nope"}, nil},
		{store.JobListDeadParams{Kind: "nope", Queue: "a"}, nil},
	} {
		if got := list(tt.p); !slices.Equal(got, ids(tt.want)) {
			t.Errorf("dead %+v = %q, want %q", tt.p, got, ids(tt.want))
		}
	}
	if got := list(store.JobListDeadParams{Kind: "y", Queue: "b"}); len(got) != deadOthers/50 {
		t.Errorf("dead of kind y in b: %d jobs, want %d", len(got), deadOthers/50)
	}

	if _, err := h.retry(x2.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := list(store.JobListDeadParams{Kind: "x"}); !slices.Equal(got, []string{x1.ID}) {
		t.Errorf("after retrying x2: %q, want x1", got)
	}
	if err := h.s.JobDelete(h.ctx, &store.JobDeleteParams{ID: x1.ID}); err != nil {
		t.Fatal(err)
	}
	if got := list(store.JobListDeadParams{Kind: "x"}); got != nil {
		t.Errorf("after deleting x1: %q, want none", got)
	}
	for {
		n, err := h.s.JobPrune(h.ctx, &store.JobPruneParams{DeadBefore: h.now(), SucceededBefore: h.now(),
			Limit: store.MaxBatch, Now: h.now()})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if got := list(store.JobListDeadParams{Kind: "y"}); got != nil {
		t.Errorf("after pruning every dead job: %d of kind y listed", len(got))
	}
}
