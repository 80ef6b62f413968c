package storetest

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// InsightsStore is a backend that also serves the dashboard's reads.
type InsightsStore interface {
	store.Store
	store.Insights
}

// RunInsights runs the contract suite of store.Insights. newStore returns a
// fresh, empty store for each test, as for Run.
func RunInsights(t *testing.T, newStore func(t *testing.T) InsightsStore) {
	for _, tc := range insightsTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			tc.run(t, &insights{harness: setup(t, func(*testing.T) store.Store { return s }), in: s})
		})
	}
}

// insights is a harness with the Insights of its store.
type insights struct {
	*harness
	in store.Insights
}

var insightsTests = []struct {
	name string
	run  func(t *testing.T, h *insights)
}{
	{"Throughput", testInsightsThroughput},
	{"ThroughputBounds", testInsightsThroughputBounds},
	{"Rescues", testInsightsRescues},
	{"RescueCount", testInsightsRescueCount},
	{"QueueDepth", testInsightsQueueDepth},
	{"QueueMinutes", testInsightsQueueMinutes},
	{"QueueMinutesMany", testInsightsQueueMinutesMany},
	{"ByHours", testInsightsByHours},
	{"Retrying", testInsightsRetrying},
	{"Dead", testInsightsDead},
	{"DeadKind", testInsightsDeadKind},
	{"Search", testInsightsSearch},
	{"SearchPrefix", testInsightsSearchPrefix},
	{"SearchQueueRunning", testInsightsSearchQueueRunning},
	{"HeldBySilent", testInsightsHeldBySilent},
	{"PageBytes", testInsightsPageBytes},
}

// pages follows a list from its first page until NextCursor is empty and
// returns the ids it listed, failing on a repeated cursor.
func (h *insights) pages(list func(cursor string) (*store.JobPage, error)) []string {
	h.t.Helper()
	var out []string
	seen := map[string]bool{}
	cursor := ""
	for range 10_000 {
		page, err := list(cursor)
		if err != nil {
			h.t.Fatalf("list after cursor %q: %v", cursor, err)
		}
		out = append(out, ids(page.Jobs)...)
		if page.NextCursor == "" {
			return out
		}
		if seen[page.NextCursor] {
			h.t.Fatalf("cursor %q came back twice", page.NextCursor)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	h.t.Fatal("the list did not end")
	return nil
}

func (h *insights) throughput(from, to time.Time) []store.ThroughputMinute {
	h.t.Helper()
	got, err := h.in.ThroughputList(h.ctx, &store.ThroughputListParams{From: from, To: to})
	if err != nil {
		h.t.Fatalf("ThroughputList: %v", err)
	}
	return got
}

func testInsightsThroughput(t *testing.T, h *insights) {
	m0 := h.now().Truncate(time.Minute)
	jobs := h.enqueue(spec("k", ""), spec("k", ""), spec("k", ""), spec("k", ""))
	leased := h.lease("w", 4)
	if len(leased) != 4 {
		t.Fatalf("leased %d of %d", len(leased), len(jobs))
	}
	h.ack(leased[0])
	if _, err := h.s.JobSettle(h.ctx, &store.JobSettleParams{
		Acks: []store.JobAckParams{{ID: leased[1].ID, Token: token(t, leased[1])}}, Now: h.now(),
	}); err != nil {
		t.Fatal(err)
	}
	h.fail(leased[2], "boom")
	h.release(leased[3], 0) // releases do not count
	short := h.running("w", store.JobSpec{Kind: "k", Queue: "short", Timeout: time.Second})
	silent := h.running("silent", spec("k", "silent"))

	h.advance(time.Minute) // into m0+1: one timeout, one rescue
	if got := h.reap(); len(got) != 1 || got[0].ID != short.ID {
		t.Fatalf("reaped %q, want [%s]", ids(got), short.ID)
	}
	o := h.orphans(h.now().Add(-store.DefaultDeadAfter))
	if len(o) != 1 || o[0].JobID != silent.ID {
		t.Fatalf("orphans %+v, want the silent worker's job", o)
	}
	h.recover("node-1", o)

	got := h.throughput(m0.Add(-time.Minute), h.now().Add(time.Minute))
	want := []store.ThroughputMinute{
		{Minute: m0.Add(-time.Minute)},
		{Minute: m0, Succeeded: 2, Failed: 1},
		{Minute: m0.Add(time.Minute), Failed: 1, Rescued: 1},
		{Minute: m0.Add(2 * time.Minute)},
	}
	wantThroughput(t, got, want)
	// From is truncated to its minute; To is exclusive.
	got = h.throughput(m0.Add(30*time.Second), m0.Add(time.Minute))
	wantThroughput(t, got, want[1:2])
}

func wantThroughput(t *testing.T, got, want []store.ThroughputMinute) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("throughput has %d minutes, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Minute.Equal(w.Minute) || g.Succeeded != w.Succeeded || g.Failed != w.Failed || g.Rescued != w.Rescued {
			t.Errorf("minute %d: %s %d/%d/%d, want %s %d/%d/%d (succeeded/failed/rescued)", i,
				fmtTime(g.Minute), g.Succeeded, g.Failed, g.Rescued, fmtTime(w.Minute), w.Succeeded, w.Failed, w.Rescued)
		}
	}
}

func testInsightsThroughputBounds(t *testing.T, h *insights) {
	now := h.now()
	if got := h.throughput(now, now.Add(-time.Hour)); len(got) != 0 {
		t.Errorf("From after To: %d minutes, want none", len(got))
	}
	got := h.throughput(now.Add(-30*24*time.Hour), now)
	if len(got) != store.MaxThroughputMinutes {
		t.Fatalf("a month: %d minutes, want the last %d", len(got), store.MaxThroughputMinutes)
	}
	wantTime(t, "last minute", got[len(got)-1].Minute, now.Truncate(time.Minute))
}

func testInsightsRescues(t *testing.T, h *insights) {
	t0 := h.now()
	a := h.running("silent", spec("send", "mail"))
	h.advance(time.Minute)
	h.recover("node-1", []store.Orphan{h.orphanOf(a)})
	firstAt := h.now()
	b := h.running("quiet", spec("resize", "img"))
	h.advance(2 * time.Minute)
	h.recover("node-2", []store.Orphan{h.orphanOf(b)})

	list := func(since time.Time, limit int) []store.Rescue {
		t.Helper()
		got, err := h.in.RescueList(h.ctx, &store.RescueListParams{Since: since, Limit: limit})
		if err != nil {
			t.Fatalf("RescueList: %v", err)
		}
		return got
	}
	got := list(time.Time{}, 0)
	if len(got) != 2 || got[0].JobID != b.ID || got[1].JobID != a.ID {
		t.Fatalf("rescues %+v, want b then a (newest first)", got)
	}
	r := got[1]
	if r.WorkerID != "silent" || r.RecoveredBy != "node-1" || r.Attempt != 1 ||
		r.Queue != "mail" || r.Kind != "send" || r.State != store.StateAvailable {
		t.Errorf("rescue of a = %+v", r)
	}
	wantTime(t, "last_heartbeat_at", r.LastHeartbeatAt, t0)
	wantTime(t, "started_at", r.StartedAt, t0)
	wantTime(t, "rescued_at", r.RescuedAt, firstAt)
	if r.RecoveryLatency() != time.Minute {
		t.Errorf("recovery latency %s, want 1m", r.RecoveryLatency())
	}
	if got := list(firstAt.Add(time.Millisecond), 0); len(got) != 1 || got[0].JobID != b.ID {
		t.Errorf("rescues since after the first = %+v, want only b", got)
	}
	if got := list(firstAt, 0); len(got) != 2 {
		t.Errorf("Since is inclusive: %d rescues, want 2", len(got))
	}
	if got := list(time.Time{}, 1); len(got) != 1 || got[0].JobID != b.ID {
		t.Errorf("Limit 1: %+v, want only b", got)
	}
}

// Rescues are counted by the node that made them, from Since on.
func testInsightsRescueCount(t *testing.T, h *insights) {
	count := func(since time.Time) map[string]int64 {
		t.Helper()
		got, err := h.in.RescueCount(h.ctx, &store.RescueCountParams{Since: since})
		if err != nil {
			t.Fatalf("RescueCount: %v", err)
		}
		return got
	}
	if got := count(time.Time{}); len(got) != 0 {
		t.Errorf("no rescue yet: %v", got)
	}
	a := h.running("silent", spec("k", "a"))
	h.advance(time.Minute)
	h.recover("node-1", []store.Orphan{h.orphanOf(a)})
	first := h.now()
	h.advance(time.Second)
	second := h.now()
	b, c := h.running("quiet", spec("k", "b")), h.running("quiet", spec("k", "c"))
	h.running("alive", spec("k", "d")) // never rescued
	h.advance(time.Minute)
	h.recover("node-2", []store.Orphan{h.orphanOf(b)})
	oc := h.orphanOf(c)
	h.recover("node-1", []store.Orphan{oc})
	h.recover("node-2", []store.Orphan{oc}) // lost the race: no rescue
	for _, tt := range []struct {
		since time.Time
		want  map[string]int64
	}{
		{time.Time{}, map[string]int64{"node-1": 2, "node-2": 1}},
		{first, map[string]int64{"node-1": 2, "node-2": 1}},
		{second, map[string]int64{"node-1": 1, "node-2": 1}},
		{h.now().Add(time.Millisecond), map[string]int64{}},
	} {
		if got := count(tt.since); !maps.Equal(got, tt.want) {
			t.Errorf("rescues since %s = %v, want %v", fmtTime(tt.since), got, tt.want)
		}
	}
}

// orphanOf advances nothing: it lists j as an orphan at the current time,
// its owner silent for DefaultDeadAfter.
func (h *insights) orphanOf(j *store.Job) store.Orphan {
	h.t.Helper()
	for _, o := range h.orphans(h.now().Add(-store.DefaultDeadAfter)) {
		if o.JobID == j.ID {
			return o
		}
	}
	h.t.Fatalf("job %s is not an orphan", j.ID)
	return store.Orphan{}
}

func testInsightsRetrying(t *testing.T, h *insights) {
	retryIn := func(queue string, d time.Duration) *store.Job {
		t.Helper()
		j := h.running("w", spec("k", queue))
		got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(t, j), Error: "later", RetryIn: &d, Now: h.now()})
		if err != nil || got.State != store.StateScheduled {
			t.Fatalf("JobFail: %v, %+v", err, got)
		}
		return got
	}
	late := retryIn("a", time.Hour)
	soon := retryIn("b", time.Minute)
	mid := retryIn("a", 10*time.Minute)
	h.enqueueOne(store.JobSpec{Kind: "k", Queue: "a", RunAt: h.now().Add(time.Minute)}) // delayed, never tried
	h.enqueueOne(spec("k", "a"))

	list := func(queue string, limit int) []string {
		return h.pages(func(cursor string) (*store.JobPage, error) {
			return h.in.JobListRetrying(h.ctx, &store.JobListRetryingParams{Queue: queue, Limit: limit, Cursor: cursor})
		})
	}
	for _, limit := range []int{0, 1, 2} {
		if got := list("", limit); !slices.Equal(got, []string{soon.ID, mid.ID, late.ID}) {
			t.Errorf("retrying (limit %d) = %q, want soon, mid, late", limit, got)
		}
	}
	if got := list("a", 1); !slices.Equal(got, []string{mid.ID, late.ID}) {
		t.Errorf("retrying in a = %q, want mid, late", got)
	}
	page, err := h.in.JobListRetrying(h.ctx, &store.JobListRetryingParams{Limit: 1})
	if err != nil || len(page.Jobs) != 1 {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	if j := page.Jobs[0]; j.Attempt != 1 || j.LastError == nil || *j.LastError != "later" {
		t.Errorf("listed job = %+v, want attempt 1 with its last error", j)
	}
	if _, err := h.s.JobRun(h.ctx, &store.JobRunParams{ID: soon.ID, Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	if got := list("", 0); !slices.Equal(got, []string{mid.ID, late.ID}) {
		t.Errorf("after running soon: %q, want mid, late", got)
	}
}

func testInsightsDead(t *testing.T, h *insights) {
	kill := func(queue, kind string, reason store.DeadReason) *store.Job {
		t.Helper()
		s := spec(kind, queue)
		if reason == store.DeadAttemptsExhausted {
			s.MaxAttempts = 1
		}
		j := h.running("w", s)
		got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(t, j), Error: "x",
			NoRetry: reason == store.DeadFailedPermanently, Now: h.now()})
		if err != nil || got.DeadReason == nil || *got.DeadReason != reason {
			t.Fatalf("JobFail: %v, %+v", err, got)
		}
		h.advance(time.Second)
		return got
	}
	d1 := kill("a", "x", store.DeadFailedPermanently)
	d2 := kill("b", "y", store.DeadAttemptsExhausted)
	d3 := kill("a", "y", store.DeadAttemptsExhausted)
	d4 := kill("a", "x", store.DeadFailedPermanently)
	h.enqueueOne(spec("x", "a"))

	list := func(p store.JobListDeadParams) []string {
		return h.pages(func(cursor string) (*store.JobPage, error) {
			q := p
			q.Cursor = cursor
			return h.in.JobListDead(h.ctx, &q)
		})
	}
	for _, tt := range []struct {
		p    store.JobListDeadParams
		want []*store.Job
	}{
		{store.JobListDeadParams{}, []*store.Job{d4, d3, d2, d1}},
		{store.JobListDeadParams{Limit: 1}, []*store.Job{d4, d3, d2, d1}},
		{store.JobListDeadParams{Queue: "a", Limit: 2}, []*store.Job{d4, d3, d1}},
		{store.JobListDeadParams{Kind: "y"}, []*store.Job{d3, d2}},
		{store.JobListDeadParams{Queue: "a", Kind: "x", Limit: 1}, []*store.Job{d4, d1}},
		{store.JobListDeadParams{Reason: store.DeadAttemptsExhausted}, []*store.Job{d3, d2}},
		{store.JobListDeadParams{Queue: "b", Reason: store.DeadFailedPermanently}, nil},
		{store.JobListDeadParams{Queue: "nope"}, nil},
	} {
		if got := list(tt.p); !slices.Equal(got, ids(tt.want)) {
			t.Errorf("dead %+v = %q, want %q", tt.p, got, ids(tt.want))
		}
	}
	if _, err := h.retry(d3.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := list(store.JobListDeadParams{}); !slices.Equal(got, ids([]*store.Job{d4, d2, d1})) {
		t.Errorf("after retrying d3: %q", got)
	}
}

func testInsightsSearch(t *testing.T, h *insights) {
	var all []*store.Job
	for i := range 6 {
		q, k := []string{"a", "b"}[i%2], []string{"x", "y", "z"}[i%3]
		all = append(all, h.enqueueOne(spec(k, q)))
		h.advance(time.Millisecond) // distinct, time-ordered ids
	}
	h.cancel(all[4].ID) // a/y
	newest := func(jobs ...*store.Job) []string {
		out := ids(jobs)
		slices.Reverse(out)
		return out
	}
	search := func(p store.JobSearchParams) []string {
		return h.pages(func(cursor string) (*store.JobPage, error) {
			q := p
			q.Cursor = cursor
			return h.in.JobSearch(h.ctx, &q)
		})
	}
	for _, tt := range []struct {
		p    store.JobSearchParams
		want []string
	}{
		{store.JobSearchParams{}, newest(all...)},
		{store.JobSearchParams{Limit: 4}, newest(all...)},
		{store.JobSearchParams{Queue: "a", Limit: 1}, newest(all[0], all[2], all[4])},
		{store.JobSearchParams{Kind: "x"}, newest(all[0], all[3])},
		{store.JobSearchParams{State: store.StateCancelled}, newest(all[4])},
		{store.JobSearchParams{Queue: "b", State: store.StateAvailable}, newest(all[1], all[3], all[5])},
		{store.JobSearchParams{Queue: "a", State: store.StateCancelled}, newest(all[4])},
		{store.JobSearchParams{Queue: "b", State: store.StateCancelled}, nil},
		{store.JobSearchParams{Queue: "a", Kind: "z", State: store.StateAvailable}, newest(all[2])},
		{store.JobSearchParams{Queue: "nope"}, nil},
		{store.JobSearchParams{IDPrefix: all[3].ID}, newest(all[3])},
		{store.JobSearchParams{IDPrefix: strings.ToUpper(all[3].ID)}, newest(all[3])},
		{store.JobSearchParams{IDPrefix: all[3].ID, Queue: "a"}, nil},
		{store.JobSearchParams{IDPrefix: "zz"}, nil},
		{store.JobSearchParams{IDPrefix: "%"}, nil},
	} {
		if got := search(tt.p); !slices.Equal(got, tt.want) {
			t.Errorf("search %+v = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// A queue's jobs of every state, running ones among them, list and search
// newest first and page by cursor without a gap or a repeat, whatever
// index each state is kept in.
func testInsightsSearchQueueRunning(t *testing.T, h *insights) {
	var all []*store.Job
	for range 7 {
		all = append(all, h.enqueueOne(spec("k", "a")))
		h.advance(time.Millisecond) // distinct, time-ordered ids
	}
	h.enqueueOne(spec("k", "b"))
	h.lease("w-b", 1, "b")
	held := h.lease("w-a", 3, "a") // the three oldest
	h.ack(held[1])
	newest := slices.Clone(ids(all))
	slices.Reverse(newest)
	for _, limit := range []int{1, 2, 3, 100} {
		got := h.pages(func(cursor string) (*store.JobPage, error) {
			return h.in.JobSearch(h.ctx, &store.JobSearchParams{Queue: "a", Limit: limit, Cursor: cursor})
		})
		if !slices.Equal(got, newest) {
			t.Errorf("search queue a, %d a page = %q, want %q", limit, got, newest)
		}
		got = h.pages(func(cursor string) (*store.JobPage, error) {
			jobs, err := h.s.JobList(h.ctx, &store.JobListParams{Queue: "a", Limit: limit, Cursor: cursor, Now: h.now()})
			page := &store.JobPage{Jobs: jobs}
			if len(jobs) == limit {
				page.NextCursor = jobs[len(jobs)-1].ID
			}
			return page, err
		})
		if !slices.Equal(got, newest) {
			t.Errorf("list queue a, %d a page = %q, want %q", limit, got, newest)
		}
	}
	running, err := h.s.JobList(h.ctx, &store.JobListParams{Queue: "a", State: store.StateRunning, Limit: 10, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(running), []string{held[2].ID, held[0].ID}; !slices.Equal(got, want) {
		t.Errorf("running in queue a = %q, want %q", got, want)
	}
	page, err := h.in.JobSearch(h.ctx, &store.JobSearchParams{Queue: "a", State: store.StateRunning, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(page.Jobs), []string{held[2].ID, held[0].ID}; !slices.Equal(got, want) {
		t.Errorf("search running in queue a = %q, want %q", got, want)
	}
}

// An id prefix matches every job whose id starts with it, and only those.
func testInsightsSearchPrefix(t *testing.T, h *insights) {
	jobs := h.enqueue(spec("k", ""), spec("k", ""), spec("k", ""))
	for _, j := range jobs {
		for _, n := range []int{1, 8, 13, 30} {
			prefix := j.ID[:n]
			var want []string
			for _, o := range jobs {
				if strings.HasPrefix(o.ID, prefix) {
					want = append(want, o.ID)
				}
			}
			page, err := h.in.JobSearch(h.ctx, &store.JobSearchParams{IDPrefix: prefix, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(page.Jobs)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("prefix %q = %q, want %q", prefix, got, want)
			}
		}
	}
}

func testInsightsHeldBySilent(t *testing.T, h *insights) {
	t0 := h.now()
	s1 := h.running("silent", spec("k", "a"))
	s2 := h.running("silent", spec("k", "b"))
	h.advance(time.Second)
	q := h.running("quiet", spec("k", "c"))
	h.running("node-1", spec("k", "d"))
	alive := h.running("alive", spec("k", "e"))
	h.advance(20 * time.Second)
	h.heartbeat("alive")
	h.advance(10 * time.Second)

	held := func(since time.Time, limit int, live ...string) []store.HeldJob {
		t.Helper()
		got, err := h.in.JobListHeldBySilent(h.ctx, &store.JobListHeldBySilentParams{SilentSince: since, LiveIDs: live, Limit: limit})
		if err != nil {
			t.Fatalf("JobListHeldBySilent: %v", err)
		}
		return got
	}
	got := held(h.now().Add(-15*time.Second), 0, "node-1")
	var gotIDs []string
	for _, hj := range got {
		gotIDs = append(gotIDs, hj.Job.ID)
	}
	wantSet(t, "held by silent workers", gotIDs, s1.ID, s2.ID, q.ID)
	if len(got) == 3 {
		if got[2].Job.ID != q.ID {
			t.Errorf("order %q: the longest silent owner's jobs come first", gotIDs)
		}
		wantTime(t, "owner last heartbeat", got[0].OwnerLastHeartbeatAt, t0)
		if j := got[0].Job; j.State != store.StateRunning || j.Lease == nil || j.Lease.WorkerID != "silent" {
			t.Errorf("held job = %+v, want running with the silent owner's lease", j)
		}
	}
	// Strictly before: an owner heard from at SilentSince is not listed.
	if got := held(t0, 0); len(got) != 0 {
		t.Errorf("silent since t0: %d jobs, want none", len(got))
	}
	if got := held(h.now(), 1, "node-1"); len(got) != 1 {
		t.Errorf("Limit 1: %d jobs", len(got))
	}
	gotIDs = nil
	for _, hj := range held(h.now(), 0, "node-1") {
		gotIDs = append(gotIDs, hj.Job.ID)
	}
	wantSet(t, "held by anyone silent now, the node aside", gotIDs, s1.ID, s2.ID, q.ID, alive.ID)
}
