package postgres_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/storetest"
)

// tp is a throughput test's store and what it expects the chart to show.
type tp struct {
	t    *testing.T
	s    *postgres.Store
	want map[time.Time]store.ThroughputMinute // by minute
}

func newTP(t *testing.T, s *postgres.Store) *tp {
	return &tp{t: t, s: s, want: map[time.Time]store.ThroughputMinute{}}
}

// m0 is the first minute of the tests' history.
var m0 = storetest.Base.Truncate(time.Minute)

// at is the instant sec seconds into minute i of the history.
func at(i, sec int) time.Time {
	return m0.Add(time.Duration(i)*time.Minute + time.Duration(sec)*time.Second)
}

// closeAt closes acks + fails attempts at the instant at: leased and settled
// then.
func (h *tp) closeAt(at time.Time, acks, fails int) {
	h.t.Helper()
	ctx := h.t.Context()
	specs := make([]store.JobSpec, acks+fails)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Queue: "tp"}
	}
	if _, err := h.s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: at}); err != nil {
		h.t.Fatal(err)
	}
	leased, err := h.s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"tp"}, Max: len(specs), Now: at})
	if err != nil || len(leased) != len(specs) {
		h.t.Fatalf("leased %d of %d: %v", len(leased), len(specs), err)
	}
	p := &store.JobSettleParams{Now: at}
	for i, j := range leased {
		if i < acks {
			p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
		} else {
			p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "x", NoRetry: true})
		}
	}
	if _, err := h.s.JobSettle(ctx, p); err != nil {
		h.t.Fatal(err)
	}
	h.expect(at, int64(acks), int64(fails), 0)
}

// expect adds to what the minute of at should show.
func (h *tp) expect(at time.Time, succeeded, failed, rescued int64) {
	m := at.Truncate(time.Minute)
	w := h.want[m]
	w.Minute, w.Succeeded, w.Failed, w.Rescued = m, w.Succeeded+succeeded, w.Failed+failed, w.Rescued+rescued
	h.want[m] = w
}

// tick runs the scheduler's per-tick call at now.
func (h *tp) tick(now time.Time) {
	h.t.Helper()
	if _, err := h.s.ThroughputRoll(h.t.Context(), &store.ThroughputRollParams{Now: now}); err != nil {
		h.t.Fatal(err)
	}
}

// read reads the minutes [first, last] of the history.
func (h *tp) read(first, last int) []store.ThroughputMinute {
	h.t.Helper()
	got, err := h.s.ThroughputList(h.t.Context(), &store.ThroughputListParams{From: at(first, 0), To: at(last+1, 0)})
	if err != nil {
		h.t.Fatal(err)
	}
	if len(got) != last-first+1 {
		h.t.Fatalf("%d minutes, want %d", len(got), last-first+1)
	}
	return got
}

// check compares got (from minute first of the history) with what is
// expected, minutes in zero aside: those must read as zeros.
func (h *tp) check(label string, got []store.ThroughputMinute, first int, zero ...int) {
	h.t.Helper()
	for i, g := range got {
		w := h.want[at(first+i, 0)]
		for _, z := range zero {
			if z == first+i {
				w = store.ThroughputMinute{}
			}
		}
		if g.Succeeded != w.Succeeded || g.Failed != w.Failed || g.Rescued != w.Rescued {
			h.t.Errorf("%s: minute %d: %d/%d/%d, want %d/%d/%d (succeeded/failed/rescued)", label, first+i,
				g.Succeeded, g.Failed, g.Rescued, w.Succeeded, w.Failed, w.Rescued)
		}
	}
}

// summed is how many minutes throughput_minutes holds, and how many of
// them fall in the minutes [first, last] of the history.
func (h *tp) summed(first, last int) (all, in int) {
	h.t.Helper()
	err := h.s.QueryRowForTest(h.t.Context(), fmt.Sprintf(`SELECT count(*),
		count(*) FILTER (WHERE minute >= '%s' AND minute <= '%s') FROM throughput_minutes`,
		at(first, 0).Format(time.RFC3339), at(last, 0).Format(time.RFC3339)), &all, &in)
	if err != nil {
		h.t.Fatal(err)
	}
	return all, in
}

// The ticks sum the settled minutes, newest first, a few a tick, within
// the day before the settled edge; until they have, the reader counts the
// newest two settled minutes not summed and shows older ones as zeros;
// summed minutes older than two days go.
func TestThroughputSummedByTicks(t *testing.T) {
	t.Parallel()
	h := newTP(t, open(t))
	h.tick(at(0, 0))
	if all, _ := h.summed(0, 0); all != 0 {
		t.Fatalf("%d minutes summed with no attempt", all)
	}
	for i := range 12 {
		h.closeAt(at(i, 10), i+1, i%3)
	}
	// The newest attempt closed at 11:10, so the minutes before 10 are
	// settled.
	if all, _ := h.summed(0, 11); all != 0 {
		t.Fatalf("%d minutes summed before any tick", all)
	}
	h.check("before the ticks", h.read(0, 11), 0, 0, 1, 2, 3, 4, 5, 6, 7)

	h.tick(at(12, 0))
	if all, in := h.summed(0, 11); all != 5 || in != 5 {
		t.Fatalf("after a tick: %d minutes summed, %d of the history; want 5 and 5", all, in)
	}
	h.check("after a tick", h.read(0, 11), 0, 0, 1, 2, 3, 4)

	h.tick(at(12, 0))
	if all, in := h.summed(0, 11); all != 10 || in != 10 {
		t.Fatalf("after two ticks: %d minutes summed, %d of the history; want 10 and 10", all, in)
	}
	h.check("after two ticks", h.read(0, 11), 0)

	// The rest of the day before the edge, as zeros, and nothing more.
	for range 300 {
		h.tick(at(12, 0))
	}
	if all, in := h.summed(0, 11); all != store.MaxThroughputMinutes || in != 10 {
		t.Errorf("after the day: %d minutes summed, %d of the history; want %d and 10", all, in, store.MaxThroughputMinutes)
	}
	h.check("after the day", h.read(-60, 11), -60)

	// Three days on, the day before the new edge is summed from its newest
	// minute, and the minutes of three days ago go.
	later := 3 * 24 * 60
	h.closeAt(at(later, 10), 1, 0)
	h.tick(at(later, 20))
	if all, in := h.summed(0, 11); all != 5 || in != 0 {
		t.Errorf("three days on: %d minutes summed, %d of the history; want 5 and 0", all, in)
	}
}

// Every outcome counts the same summed as counted: a reader sees the same
// minutes before and after the tick sums them.
func TestThroughputSameBeforeAndAfterSumming(t *testing.T) {
	t.Parallel()
	h := newTP(t, open(t))
	ctx := t.Context()
	h.closeAt(at(0, 5), 3, 2)
	// Minute 1: a timeout, a rescue, a release and a cancel; the last two
	// do not count.
	enq := func(spec store.JobSpec, worker string) *store.Job {
		if _, err := h.s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{spec}, Now: at(1, 0)}); err != nil {
			t.Fatal(err)
		}
		l, err := h.s.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{spec.Queue}, Max: 1, Now: at(1, 0)})
		if err != nil || len(l) != 1 {
			t.Fatalf("lease: %v", err)
		}
		return l[0]
	}
	short := enq(store.JobSpec{Kind: "k", Queue: "short", Timeout: time.Second, MaxAttempts: 1}, "w")
	if reaped, err := h.s.JobReap(ctx, &store.JobReapParams{Now: at(1, 10)}); err != nil || len(reaped) != 1 || reaped[0].ID != short.ID {
		t.Fatalf("reap: %v", err)
	}
	silent := enq(store.JobSpec{Kind: "k", Queue: "silent"}, "silent")
	o := store.Orphan{JobID: silent.ID, WorkerID: "silent", Token: silent.Lease.Token, LastHeartbeatAt: at(1, 0)}
	if won, err := h.s.JobRecover(ctx, &store.JobRecoverParams{Orphans: []store.Orphan{o}, NodeID: "n", Now: at(1, 20)}); err != nil || len(won) != 1 {
		t.Fatalf("recover: %v", err)
	}
	released := enq(store.JobSpec{Kind: "k", Queue: "released"}, "w")
	if _, err := h.s.JobRelease(ctx, &store.JobReleaseParams{ID: released.ID, Token: released.Lease.Token, Now: at(1, 30)}); err != nil {
		t.Fatal(err)
	}
	cancelled := enq(store.JobSpec{Kind: "k", Queue: "cancelled"}, "w")
	if _, err := h.s.JobCancel(ctx, &store.JobCancelParams{ID: cancelled.ID, Now: at(1, 40)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.JobFail(ctx, &store.JobFailParams{ID: cancelled.ID, Token: cancelled.Lease.Token, Error: "stop", Now: at(1, 41)}); err != nil {
		t.Fatal(err)
	}
	h.expect(at(1, 0), 0, 1, 1)
	h.closeAt(at(3, 10), 1, 0) // minutes 0 and 1 settled
	before := h.read(0, 3)
	h.check("before summing", before, 0)

	h.tick(at(3, 20))
	if _, in := h.summed(0, 3); in != 2 {
		t.Fatalf("%d minutes of the history summed, want 2", in)
	}
	after := h.read(0, 3)
	h.check("after summing", after, 0)
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("minute %d: %+v before summing, %+v after", i, before[i], after[i])
		}
	}
}

// An attempt that commits into a minute already summed is not counted;
// into a settled minute not summed yet, it is.
func TestThroughputLateAttempts(t *testing.T) {
	t.Parallel()
	h := newTP(t, open(t))
	h.closeAt(at(0, 10), 2, 0)
	h.closeAt(at(2, 5), 1, 0)
	h.tick(at(2, 10)) // minute 0 summed; minute 1 not settled yet

	h.closeAt(at(0, 30), 1, 0) // late, into minute 0
	h.expect(at(0, 0), -1, 0, 0)
	h.closeAt(at(1, 30), 1, 0) // late, into minute 1
	h.check("after the late attempts", h.read(0, 2), 0)

	h.closeAt(at(3, 10), 1, 0)
	h.tick(at(3, 20)) // minute 1 summed, with its late attempt
	if _, in := h.summed(0, 3); in != 2 {
		t.Fatalf("%d minutes of the history summed, want 2", in)
	}
	h.check("after summing minute 1", h.read(0, 3), 0)
}

// Two replicas ticking at once, while both read the chart, store each
// minute once with its exact counts; no read shows a minute counted twice
// or in part (a minute not summed yet may read as zeros meanwhile).
func TestThroughputReplicasSumOnce(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2)
	h := newTP(t, rs[0])
	const minutes = 20
	for i := range minutes {
		h.closeAt(at(i, 15), 5+i%4, i%3)
	}
	now := at(minutes, 0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	errs := make(chan error, 100)
	for _, s := range rs {
		for range 2 {
			wg.Go(func() {
				for range 40 {
					if _, err := s.ThroughputRoll(t.Context(), &store.ThroughputRollParams{Now: now}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := s.ThroughputList(t.Context(), &store.ThroughputListParams{From: at(0, 0), To: at(minutes, 0)})
				if err != nil {
					errs <- err
					return
				}
				for i, g := range got {
					if w := h.want[at(i, 0)]; g != w && (g != store.ThroughputMinute{Minute: w.Minute}) {
						errs <- fmt.Errorf("minute %d read %+v, want %+v or zeros", i, g, w)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// However the lock fell, 160 ticks summed the settled minutes: the
	// newest attempt closed in the last minute, so all but the last two.
	if _, in := h.summed(0, minutes-1); in != minutes-2 {
		t.Fatalf("%d minutes of the history summed, want %d", in, minutes-2)
	}
	for _, s := range rs {
		h.s = s
		h.check("after the ticks", h.read(0, minutes-1), 0)
	}
}

// The tick's sum reads attempts by attempts_finished, a minute's range at
// a time, never a scan of the table, whose size is a day of attempts.
func TestThroughputSumUsesIndex(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	for _, q := range []string{
		`INSERT INTO attempts (job_id, id, attempt, worker_id, started_at, finished_at, outcome)
		SELECT gen_random_uuid(), gen_random_uuid(), 1, 'w', now() - i * interval '4 seconds',
			now() - i * interval '4 seconds', CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'succeeded' END
		FROM generate_series(1, 20000) i`,
		`ANALYZE attempts`,
	} {
		if err := s.ExecForTest(ctx, q); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	sql, args := postgres.SumThroughputForTest(time.Now())
	plan, err := s.PlanForTest(ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, "Seq Scan on attempts") || !strings.Contains(plan, "attempts_finished") {
		t.Errorf("the sum does not read attempts by attempts_finished:\n%s", plan)
	}
}
