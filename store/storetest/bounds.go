package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var boundTests = []test{
	{"ListBytes", testBoundListBytes},
	{"AttemptsShown", testBoundAttemptsShown},
}

// weighty enqueues n jobs of queue, each with a payload of size bytes, and
// returns them newest first.
func (h *harness) weighty(queue string, n, size int) []*store.Job {
	h.t.Helper()
	var out []*store.Job
	for i := range n {
		payload, _ := json.Marshal(fmt.Sprintf("%d%s", i, strings.Repeat("x", size-3)))
		out = append(out, h.enqueueOne(store.JobSpec{Kind: "k", Queue: queue, Payload: payload}))
		h.advance(time.Millisecond)
	}
	slices.Reverse(out)
	return out
}

// testBoundListBytes: a page ends at the first job that spends its byte
// budget, however high its limit, and the next page goes on after it.
func testBoundListBytes(t *testing.T, h *harness) {
	jobs := h.weighty("big", 7, 1000)
	size := store.JobBytes(jobs[0])
	list := func(cursor string) []*store.Job {
		t.Helper()
		got, err := h.s.JobList(h.ctx, &store.JobListParams{Queue: "big", Limit: 1000, Cursor: cursor,
			MaxBytes: 2*size + 1, Now: h.now()})
		if err != nil {
			t.Fatalf("JobList: %v", err)
		}
		return got
	}
	var seen []string
	for cursor, pages := "", 0; ; pages++ {
		page := list(cursor)
		if pages > len(jobs) {
			t.Fatal("the list did not end")
		}
		// 2·size+1 bytes: the third job spends the budget and ends the page.
		if want := min(3, len(jobs)-len(seen)); len(page) != want {
			t.Fatalf("page %d holds %d jobs, want %d", pages, len(page), want)
		}
		seen = append(seen, ids(page)...)
		if !store.PageFull(page, 2*size+1) {
			break
		}
		cursor = page[len(page)-1].ID
	}
	if want := ids(jobs); !slices.Equal(seen, want) {
		t.Errorf("pages listed %q\nwant every job once, newest first %q", seen, want)
	}
	// One job larger than the whole budget still makes a page.
	got, err := h.s.JobList(h.ctx, &store.JobListParams{Queue: "big", Limit: 1000, MaxBytes: 10, Now: h.now()})
	if err != nil || len(got) != 1 || got[0].ID != jobs[0].ID {
		t.Errorf("JobList under a 10-byte budget = %v, %v; want the newest job alone", ids(got), err)
	}
}

// testBoundAttemptsShown: JobGet returns the newest MaxAttemptsShown
// attempts, oldest first, the open one last.
func testBoundAttemptsShown(t *testing.T, h *harness) {
	j := h.enqueueOne(spec("k", "churn"))
	const deliveries = store.MaxAttemptsShown + 5 // and one more, left open
	for range deliveries {
		l := h.leaseOne("w", "churn")
		h.advance(time.Millisecond)
		h.release(l, 0)
		h.advance(time.Millisecond)
	}
	h.leaseOne("w", "churn")
	got := h.get(j.ID).Attempts
	if len(got) != store.MaxAttemptsShown {
		t.Fatalf("JobGet returned %d attempts, want the newest %d", len(got), store.MaxAttemptsShown)
	}
	if last := got[len(got)-1]; last.Outcome != store.OutcomeRunning || !last.StartedAt.Equal(h.now()) {
		t.Errorf("the last attempt is %s, started %v; want the open one, started %v", last.Outcome, last.StartedAt, h.now())
	}
	for i := 1; i < len(got); i++ {
		if got[i].StartedAt.Before(got[i-1].StartedAt) {
			t.Fatalf("attempts out of order at %d: %v after %v", i, got[i-1].StartedAt, got[i].StartedAt)
		}
	}
	// Delivery i started at Base + 2i ms; of deliveries+1 in all, the
	// newest MaxAttemptsShown are shown.
	firstShown := deliveries + 1 - store.MaxAttemptsShown
	if want := Base.Add(time.Duration(2*firstShown) * time.Millisecond); !got[0].StartedAt.Equal(want) {
		t.Errorf("the oldest attempt shown started at %v, want delivery %d's %v", got[0].StartedAt, firstShown, want)
	}
}

// testInsightsPageBytes: the dashboard's lists end a page at the job that
// spends its byte budget, and their cursors go on from there: following
// them lists every match once, in order.
func testInsightsPageBytes(t *testing.T, h *insights) {
	const n, size = 5, 1000
	big := h.weighty("big", n, size) // newest first
	var dead, retrying []*store.Job
	for range n {
		d := h.running("w", store.JobSpec{Kind: "k", Queue: "dead", Payload: big[0].Payload})
		h.advance(time.Second)
		dead = append([]*store.Job{h.failNoRetry(d)}, dead...) // newest finished first
		r := h.running("w", store.JobSpec{Kind: "k", Queue: "retry", Payload: big[0].Payload})
		retrying = append(retrying, h.fail(r, "again")) // soonest run_at first
		h.advance(time.Second)
	}
	// Each list's jobs weigh the same: a budget of two and a byte ends a
	// page at its third job.
	var budget int
	for _, tt := range []struct {
		name string
		list func(cursor string) (*store.JobPage, error)
		want []*store.Job
	}{
		{"search", func(c string) (*store.JobPage, error) {
			return h.in.JobSearch(h.ctx, &store.JobSearchParams{Queue: "big", Limit: 100, Cursor: c, MaxBytes: budget})
		}, big},
		{"dead", func(c string) (*store.JobPage, error) {
			return h.in.JobListDead(h.ctx, &store.JobListDeadParams{Queue: "dead", Limit: 100, Cursor: c, MaxBytes: budget})
		}, dead},
		{"retrying", func(c string) (*store.JobPage, error) {
			return h.in.JobListRetrying(h.ctx, &store.JobListRetryingParams{Queue: "retry", Limit: 100, Cursor: c, MaxBytes: budget})
		}, retrying},
	} {
		budget = 2*store.JobBytes(tt.want[0]) + 1
		first, err := tt.list("")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(first.Jobs) != 3 || first.NextCursor == "" {
			t.Errorf("%s: the first page holds %d jobs (cursor %q), want 3 and a cursor", tt.name, len(first.Jobs), first.NextCursor)
		}
		if got := h.pages(tt.list); !slices.Equal(got, ids(tt.want)) {
			t.Errorf("%s: pages listed %q\nwant %q", tt.name, got, ids(tt.want))
		}
	}
}
