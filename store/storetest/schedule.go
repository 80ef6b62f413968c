package storetest

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var scheduleTests = []test{
	{"Upsert", testScheduleUpsert},
	{"UpsertFileIsReadOnly", testScheduleUpsertFile},
	{"UpsertIfChangedConcurrent", testScheduleUpsertIfChangedConcurrent},
	{"Fire", testScheduleFire},
	{"FireLostCAS", testScheduleFireLost},
	{"FireConcurrent", testScheduleFireConcurrent},
	{"FireWakes", testScheduleFireWakes},
	{"OverlapSkip", testScheduleOverlapSkip},
	{"Trigger", testScheduleTrigger},
	{"PauseResume", testSchedulePauseResume},
	{"Delete", testScheduleDelete},
	{"ListDue", testScheduleListDue},
	{"ListJobsBySchedule", testScheduleListJobs},
}

// every is a spec firing every d, for jobs of kind k.
func every(name string, d time.Duration) store.ScheduleSpec {
	s := store.ScheduleSpec{Name: name, Every: d, Job: store.ScheduleJob{Kind: "k",
		Payload: json.RawMessage(`{"n":1}`), Priority: 5, Tags: []string{"t"}}}
	s.Normalize()
	return s
}

func (h *harness) upsert(spec store.ScheduleSpec, source store.ScheduleSource) *store.ScheduleUpsertResult {
	h.t.Helper()
	res, err := h.s.ScheduleUpsert(h.ctx, &store.ScheduleUpsertParams{Spec: spec, Source: source, Now: h.now()})
	if err != nil {
		h.t.Fatalf("ScheduleUpsert(%s): %v", spec.Name, err)
	}
	return res
}

func (h *harness) schedule(name string) *store.Schedule {
	h.t.Helper()
	s, err := h.s.ScheduleGet(h.ctx, &store.ScheduleGetParams{Name: name})
	if err != nil {
		h.t.Fatalf("ScheduleGet(%s): %v", name, err)
	}
	return s
}

// fire fires s as the scheduler would at the clock's time, one tick of a
// second.
func (h *harness) fire(s *store.Schedule) *store.ScheduleFireResult {
	h.t.Helper()
	res, err := h.s.ScheduleFire(h.ctx, fireParams(s, h.now()))
	if err != nil {
		h.t.Fatalf("ScheduleFire(%s): %v", s.Name, err)
	}
	return res
}

func fireParams(s *store.Schedule, now time.Time) *store.ScheduleFireParams {
	plan := s.Plan(now, time.Second)
	return &store.ScheduleFireParams{Name: s.Name, NextFireAt: s.NextFireAt, Version: s.Version,
		Jobs: s.Jobs(plan), Missed: plan.Missed, Next: plan.Next, Now: now}
}

func testScheduleUpsert(t *testing.T, h *harness) {
	spec := every("nightly", time.Minute)
	res := h.upsert(spec, store.SourceAPI)
	if !res.Created || !res.Changed {
		t.Errorf("first upsert: created %v changed %v, want both", res.Created, res.Changed)
	}
	got := h.schedule("nightly")
	if got.Version != 1 || got.Source != store.SourceAPI || got.Every != time.Minute || got.Job.Kind != "k" ||
		got.Job.Priority != 5 || !slices.Equal(got.Job.Tags, []string{"t"}) || got.SpecHash != spec.Hash() {
		t.Errorf("stored %+v", got)
	}
	wantJSON(t, "job payload", got.Job.Payload, []byte(`{"n":1}`))
	wantTime(t, "next_fire_at", got.NextFireAt, spec.Next(h.now()))
	wantTime(t, "created_at", got.CreatedAt, h.now())
	created := h.now()
	h.advance(90 * time.Second)
	spec.Every = time.Hour
	res = h.upsert(spec, store.SourceAPI)
	got = h.schedule("nightly")
	if res.Created || got.Version != 2 || got.Every != time.Hour {
		t.Errorf("replace: created %v, version %d every %s", res.Created, got.Version, got.Every)
	}
	wantTime(t, "created_at after replace", got.CreatedAt, created)
	wantTime(t, "next_fire_at after replace", got.NextFireAt, spec.Next(h.now()))
	// The same spec again, IfChanged: nothing written.
	r, err := h.s.ScheduleUpsert(h.ctx, &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceAPI, IfChanged: true, Now: h.now()})
	if err != nil || r.Changed || h.schedule("nightly").Version != 2 {
		t.Errorf("unchanged upsert: %+v, %v", r, err)
	}
	_, err = h.s.ScheduleGet(h.ctx, &store.ScheduleGetParams{Name: "none"})
	wantErr(t, "ScheduleGet of an unknown schedule", err, store.ErrNotFound)
	h.upsert(every("a-first", time.Minute), store.SourceAPI)
	list, err := h.s.ScheduleList(h.ctx, &store.ScheduleListParams{})
	if err != nil || len(list) != 2 || list[0].Name != "a-first" || list[1].Name != "nightly" {
		t.Errorf("ScheduleList = %v, %v; want a-first, nightly", list, err)
	}
}

// A file schedule cannot be written over the API; the file's own upsert
// replaces it, and takes over an API schedule of the same name.
func testScheduleUpsertFile(t *testing.T, h *harness) {
	h.upsert(every("f", time.Minute), store.SourceFile)
	_, err := h.s.ScheduleUpsert(h.ctx, &store.ScheduleUpsertParams{Spec: every("f", time.Hour), Source: store.SourceAPI, Now: h.now()})
	wantErr(t, "API upsert of a file schedule", err, store.ErrInvalidState)
	err = h.s.ScheduleDelete(h.ctx, &store.ScheduleDeleteParams{Name: "f", Source: store.SourceAPI})
	wantErr(t, "API delete of a file schedule", err, store.ErrInvalidState)
	if got := h.schedule("f"); got.Every != time.Minute || got.Version != 1 {
		t.Errorf("file schedule changed: every %s version %d", got.Every, got.Version)
	}
	h.upsert(every("a", time.Minute), store.SourceAPI)
	h.upsert(every("a", time.Minute), store.SourceFile)
	if got := h.schedule("a"); got.Source != store.SourceFile || got.Version != 2 {
		t.Errorf("file over API: source %s version %d", got.Source, got.Version)
	}
}

// Replicas starting together upsert the same file spec IfChanged at once:
// exactly one writes, for a new schedule and for a changed one.
func testScheduleUpsertIfChangedConcurrent(t *testing.T, h *harness) {
	spec := every("f", time.Minute)
	for round, wantVersion := range []int64{1, 2} {
		var wg sync.WaitGroup
		changed := make([]bool, 8)
		for i := range changed {
			wg.Go(func() {
				r, err := h.s.ScheduleUpsert(h.ctx, &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceFile,
					IfChanged: true, Now: h.now()})
				if err != nil {
					t.Errorf("upsert %d: %v", i, err)
					return
				}
				changed[i] = r.Changed
			})
		}
		wg.Wait()
		if n := countTrue(changed); n != 1 {
			t.Errorf("round %d: %d upserts wrote, want 1", round, n)
		}
		if got := h.schedule("f"); got.Version != wantVersion {
			t.Errorf("round %d: version %d, want %d", round, got.Version, wantVersion)
		}
		spec.Every = time.Hour
	}
}

func testScheduleFire(t *testing.T, h *harness) {
	h.upsert(every("s", time.Minute), store.SourceAPI)
	s := h.schedule("s")
	slot := s.NextFireAt
	h.clock.Advance(slot.Sub(h.now()) + 300*time.Millisecond)
	res := h.fire(s)
	if !res.Won || len(res.Jobs) != 1 {
		t.Fatalf("fire: won %v, %d jobs; want one", res.Won, len(res.Jobs))
	}
	j := h.get(res.Jobs[0].ID)
	if j.Schedule == nil || *j.Schedule != "s" || j.Kind != "k" || j.Priority != 5 || j.Trace != nil {
		t.Errorf("fired job %+v", j)
	}
	wantTimePtr(t, "scheduled_for", j.ScheduledFor, slot)
	wantTime(t, "run_at", j.RunAt, slot)
	wantState(t, j, store.StateAvailable, 0, 0)
	got := h.schedule("s")
	wantTime(t, "next_fire_at", got.NextFireAt, slot.Add(time.Minute))
	wantTimePtr(t, "last_fire_at", got.LastFireAt, slot)
	if got.FiresTotal != 1 || got.MissedTotal != 0 || got.LastJobID == nil || *got.LastJobID != j.ID || got.Version != s.Version {
		t.Errorf("after a fire: %+v", got)
	}
	// Three minutes later three slots are due, catchup latest: the newest
	// missed and the one on time fire, the other missed one counts.
	h.clock.Advance(3 * time.Minute)
	res = h.fire(got)
	if len(res.Jobs) != 2 {
		t.Fatalf("catch-up fire: %d jobs, want 2", len(res.Jobs))
	}
	wantTimePtr(t, "catch-up slot", res.Jobs[0].ScheduledFor, slot.Add(2*time.Minute))
	wantTimePtr(t, "on-time slot", res.Jobs[1].ScheduledFor, slot.Add(3*time.Minute))
	got = h.schedule("s")
	if got.FiresTotal != 3 || got.MissedTotal != 1 || *got.LastJobID != res.Jobs[1].ID {
		t.Errorf("after catch-up: fires %d missed %d", got.FiresTotal, got.MissedTotal)
	}
	if q := h.queue(store.DefaultQueue); q.Counts[store.StateAvailable] != 3 {
		t.Errorf("queue counts %d available, want the 3 fired jobs", q.Counts[store.StateAvailable])
	}
}

// A fire with a stale next_fire_at or version changes nothing.
func testScheduleFireLost(t *testing.T, h *harness) {
	h.upsert(every("s", time.Minute), store.SourceAPI)
	s := h.schedule("s")
	h.clock.Advance(s.NextFireAt.Sub(h.now()))
	h.fire(s)
	res := h.fire(s) // the same row as read before the first fire
	if res.Won || len(res.Jobs) != 0 {
		t.Errorf("second fire of one slot: won %v, %d jobs", res.Won, len(res.Jobs))
	}
	s = h.schedule("s")
	h.clock.Advance(time.Minute)
	h.upsert(every("s", time.Minute), store.SourceAPI) // version 2
	if res := h.fire(s); res.Won {
		t.Error("a fire of version 1 won over version 2")
	}
	gone := *s
	gone.Name = "gone"
	if res := h.fire(&gone); res.Won {
		t.Error("a fire of a missing schedule won")
	}
	if n := len(h.list(store.JobListParams{Schedule: "s"})); n != 1 {
		t.Errorf("%d jobs of s, want the one fire that won", n)
	}
}

// Firers racing on one slot: exactly one wins and one job is enqueued.
func testScheduleFireConcurrent(t *testing.T, h *harness) {
	FireRace(t, []store.Store{h.s, h.s, h.s, h.s}, h.now())
}

// FireRace has each store fire the same due slot of one schedule at once
// and checks that exactly one fire won, with one job. The stores share
// one database (replicas), or are one store several times.
func FireRace(t *testing.T, stores []store.Store, now time.Time) {
	ctx := t.Context()
	spec := every("race", time.Second)
	if _, err := stores[0].ScheduleUpsert(ctx, &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceAPI, Now: now}); err != nil {
		t.Fatal(err)
	}
	s, err := stores[0].ScheduleGet(ctx, &store.ScheduleGetParams{Name: "race"})
	if err != nil {
		t.Fatal(err)
	}
	at := s.NextFireAt.Add(100 * time.Millisecond)
	for round := range 5 {
		var wg sync.WaitGroup
		won := make([]bool, len(stores))
		for i, st := range stores {
			wg.Go(func() {
				res, err := st.ScheduleFire(ctx, fireParams(s, at))
				if err != nil {
					t.Errorf("store %d: %v", i, err)
					return
				}
				won[i] = res.Won && len(res.Jobs) == 1
			})
		}
		wg.Wait()
		if n := countTrue(won); n != 1 {
			t.Fatalf("round %d: %d fires won, want 1", round, n)
		}
		if s, err = stores[1%len(stores)].ScheduleGet(ctx, &store.ScheduleGetParams{Name: "race"}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}
	jobs, err := stores[0].JobList(ctx, &store.JobListParams{Schedule: "race", Now: at})
	if err != nil {
		t.Fatal(err)
	}
	slots := map[int64]bool{}
	for _, j := range jobs {
		slots[j.ScheduledFor.UnixMilli()] = true
	}
	if len(jobs) != 5 || len(slots) != 5 {
		t.Errorf("%d jobs over %d slots, want 5 and 5", len(jobs), len(slots))
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// A fired job wakes a waiting leaser: the fire inserts through the enqueue
// path.
func testScheduleFireWakes(t *testing.T, h *harness) {
	h.upsert(every("s", time.Minute), store.SourceAPI)
	s := h.schedule("s")
	w := h.s.LeaseWakeup([]string{store.DefaultQueue})
	defer w.Release()
	h.clock.Advance(s.NextFireAt.Sub(h.now()))
	h.fire(s)
	wantWoken(t, "a leaser after a fire", w.C())
}

// overlap skip never leaves two unfinished jobs of the schedule.
func testScheduleOverlapSkip(t *testing.T, h *harness) {
	spec := every("s", time.Minute)
	spec.Overlap, spec.Catchup, spec.MaxCatchup = store.OverlapSkip, store.CatchupAll, 10
	h.upsert(spec, store.SourceAPI)
	s := h.schedule("s")
	// Three slots at once: the first fires, the two after it are skipped.
	h.clock.Advance(s.NextFireAt.Sub(h.now()) + 2*time.Minute)
	res := h.fire(s)
	if len(res.Jobs) != 1 || res.Skipped != 2 {
		t.Fatalf("three slots under skip: %d jobs, %d skipped; want 1 and 2", len(res.Jobs), res.Skipped)
	}
	first := res.Jobs[0]
	h.clock.Advance(time.Minute)
	res = h.fire(h.schedule("s"))
	if len(res.Jobs) != 0 || res.Skipped != 1 || !res.Won {
		t.Fatalf("while the job is unfinished: won %v, %d jobs, %d skipped", res.Won, len(res.Jobs), res.Skipped)
	}
	l := h.leaseOne("w")
	if l.ID != first.ID {
		t.Fatalf("leased %s, want %s", l.ID, first.ID)
	}
	h.ack(l)
	h.clock.Advance(time.Minute)
	if res = h.fire(h.schedule("s")); len(res.Jobs) != 1 {
		t.Errorf("after the job finished: %d jobs, want 1", len(res.Jobs))
	}
	got := h.schedule("s")
	if got.FiresTotal != 2 || got.SkippedTotal != 3 {
		t.Errorf("fires %d skipped %d, want 2 and 3", got.FiresTotal, got.SkippedTotal)
	}
}

func testScheduleTrigger(t *testing.T, h *harness) {
	spec := every("s", time.Hour)
	spec.Overlap = store.OverlapSkip
	h.upsert(spec, store.SourceAPI)
	before := h.schedule("s")
	h.advance(time.Second)
	for range 2 { // overlap skip does not hold a trigger back
		j, err := h.s.ScheduleTrigger(h.ctx, &store.ScheduleTriggerParams{Name: "s", Now: h.now()})
		if err != nil {
			t.Fatal(err)
		}
		wantTimePtr(t, "scheduled_for", j.ScheduledFor, h.now())
		if j.Schedule == nil || *j.Schedule != "s" || j.State != store.StateAvailable {
			t.Errorf("triggered job %+v", j)
		}
	}
	got := h.schedule("s")
	wantTime(t, "next_fire_at after trigger", got.NextFireAt, before.NextFireAt)
	if got.FiresTotal != 2 {
		t.Errorf("fires_total %d, want 2", got.FiresTotal)
	}
	_, err := h.s.ScheduleTrigger(h.ctx, &store.ScheduleTriggerParams{Name: "none", Now: h.now()})
	wantErr(t, "trigger of an unknown schedule", err, store.ErrNotFound)
}

func testSchedulePauseResume(t *testing.T, h *harness) {
	h.upsert(every("s", time.Minute), store.SourceAPI)
	p, err := h.s.ScheduleSetPaused(h.ctx, &store.ScheduleSetPausedParams{Name: "s", Paused: true, Now: h.now()})
	if err != nil || !p.Paused || p.Version != 2 {
		t.Fatalf("pause: %+v, %v", p, err)
	}
	h.advance(10 * time.Minute)
	if due := h.due(); len(due) != 0 {
		t.Errorf("a paused schedule is due: %v", due)
	}
	r, err := h.s.ScheduleSetPaused(h.ctx, &store.ScheduleSetPausedParams{Name: "s", Paused: false, Now: h.now()})
	if err != nil || r.Paused || r.Version != 3 {
		t.Fatalf("resume: %+v, %v", r, err)
	}
	wantTime(t, "next_fire_at after resume", r.NextFireAt, r.Next(h.now()))
	if got := h.schedule("s"); got.MissedTotal != 0 || got.Paused {
		t.Errorf("after resume: %+v", got)
	}
	_, err = h.s.ScheduleSetPaused(h.ctx, &store.ScheduleSetPausedParams{Name: "none", Paused: true, Now: h.now()})
	wantErr(t, "pause of an unknown schedule", err, store.ErrNotFound)
}

func testScheduleDelete(t *testing.T, h *harness) {
	h.upsert(every("s", time.Minute), store.SourceAPI)
	j, err := h.s.ScheduleTrigger(h.ctx, &store.ScheduleTriggerParams{Name: "s", Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.s.ScheduleDelete(h.ctx, &store.ScheduleDeleteParams{Name: "s", Source: store.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	_, err = h.s.ScheduleGet(h.ctx, &store.ScheduleGetParams{Name: "s"})
	wantErr(t, "get after delete", err, store.ErrNotFound)
	err = h.s.ScheduleDelete(h.ctx, &store.ScheduleDeleteParams{Name: "s"})
	wantErr(t, "delete twice", err, store.ErrNotFound)
	h.get(j.ID) // its job stays
}

func (h *harness) due() []string {
	h.t.Helper()
	due, err := h.s.ScheduleListDue(h.ctx, &store.ScheduleListDueParams{Now: h.now()})
	if err != nil {
		h.t.Fatalf("ScheduleListDue: %v", err)
	}
	var names []string
	for _, s := range due {
		names = append(names, s.Name)
	}
	return names
}

func testScheduleListDue(t *testing.T, h *harness) {
	h.upsert(every("hourly", time.Hour), store.SourceAPI)
	h.upsert(every("minutely", time.Minute), store.SourceAPI)
	if due := h.due(); len(due) != 0 {
		t.Errorf("due at once: %v", due)
	}
	h.advance(time.Hour)
	if due := h.due(); !slices.Equal(due, []string{"minutely", "hourly"}) {
		t.Errorf("due = %v, want minutely (earlier) then hourly", due)
	}
	got, err := h.s.ScheduleListDue(h.ctx, &store.ScheduleListDueParams{Now: h.now(), Limit: 1})
	if err != nil || len(got) != 1 {
		t.Errorf("limit 1: %d schedules, %v", len(got), err)
	}
}

func (h *harness) list(p store.JobListParams) []*store.Job {
	h.t.Helper()
	p.Now = h.now()
	jobs, err := h.s.JobList(h.ctx, &p)
	if err != nil {
		h.t.Fatalf("JobList: %v", err)
	}
	return jobs
}

// JobList's schedule filter lists a schedule's jobs newest first, with the
// other filters.
func testScheduleListJobs(t *testing.T, h *harness) {
	h.upsert(every("a", time.Minute), store.SourceAPI)
	h.upsert(every("b", time.Minute), store.SourceAPI)
	var a []string
	for i := range 3 {
		h.advance(time.Millisecond)
		name := []string{"a", "b"}[i%2]
		j, err := h.s.ScheduleTrigger(h.ctx, &store.ScheduleTriggerParams{Name: name, Now: h.now()})
		if err != nil {
			t.Fatal(err)
		}
		if name == "a" {
			a = append([]string{j.ID}, a...)
		}
	}
	h.enqueueOne(store.JobSpec{Kind: "k"})
	if got := ids(h.list(store.JobListParams{Schedule: "a"})); !slices.Equal(got, a) {
		t.Errorf("jobs of a = %v, want %v", got, a)
	}
	if got := h.list(store.JobListParams{Schedule: "a", Limit: 1}); len(got) != 1 || got[0].ID != a[0] {
		t.Errorf("first page of a: %v", ids(got))
	}
	if got := h.list(store.JobListParams{Schedule: "a", Cursor: a[0]}); len(got) != 1 || got[0].ID != a[1] {
		t.Errorf("second page of a: %v", ids(got))
	}
	if got := h.list(store.JobListParams{Schedule: "a", Queue: "other"}); len(got) != 0 {
		t.Errorf("jobs of a in queue other: %v", ids(got))
	}
	if got := h.list(store.JobListParams{Schedule: "none"}); len(got) != 0 {
		t.Errorf("jobs of an unknown schedule: %v", ids(got))
	}
}
