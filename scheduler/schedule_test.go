package scheduler_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
)

func upsertSchedule(t *testing.T, st store.Store, spec store.ScheduleSpec, now time.Time) {
	t.Helper()
	spec.Normalize()
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ScheduleUpsert(t.Context(), &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceAPI, Now: now}); err != nil {
		t.Fatal(err)
	}
}

// slotsFired lists the scheduled_for of a schedule's jobs, oldest first.
func slotsFired(t *testing.T, st store.Store, name string) []time.Time {
	t.Helper()
	jobs, err := st.JobList(t.Context(), &store.JobListParams{Schedule: name, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]time.Time, len(jobs))
	for i, j := range jobs {
		out[len(jobs)-1-i] = *j.ScheduledFor
	}
	return out
}

// Two nodes ticking at once over one store fire each slot of an every-second
// schedule exactly once, one second apart; the metrics of both add up.
func TestScheduleFiresEachSlotOnce(t *testing.T) {
	st := setup(t)
	upsertSchedule(t, st, store.ScheduleSpec{Name: "s", Every: time.Second, Job: store.ScheduleJob{Kind: "k"}}, t0)
	a := newNode(t, st, "a", scheduler.Config{})
	b := newNode(t, st, "b", scheduler.Config{})
	for i := 1; i <= 10; i++ {
		now := t0.Add(time.Duration(i)*time.Second + 200*time.Millisecond)
		var wg sync.WaitGroup
		wg.Go(func() { a.tick(t, now) })
		wg.Go(func() { b.tick(t, now) })
		wg.Wait()
	}
	slots := slotsFired(t, st, "s")
	if len(slots) != 10 {
		t.Fatalf("%d jobs for 10 slots", len(slots))
	}
	for i, s := range slots {
		if want := t0.Add(time.Duration(i+1) * time.Second); !s.Equal(want) {
			t.Errorf("slot %d = %s, want %s", i, s, want)
		}
	}
	fires := counterOf(t, a, "tether_schedule_fires_total") + counterOf(t, b, "tether_schedule_fires_total")
	if fires != 10 {
		t.Errorf("tether_schedule_fires_total over both nodes = %v, want 10", fires)
	}
	if log := a.log.Take() + b.log.Take(); !strings.Contains(log, "fired schedules") {
		t.Errorf("no log line of the fires:\n%s", log)
	}
}

// After downtime, each catch-up policy fires what API.md says and the
// store and the metric count the rest as missed.
func TestScheduleCatchupAfterDowntime(t *testing.T) {
	for _, tc := range []struct {
		catchup store.Catchup
		fired   int // of 10 slots down, plus the one on time
		missed  int64
	}{
		{store.CatchupNone, 1, 10},
		{store.CatchupLatest, 2, 9},
		{store.CatchupAll, 1 + 4, 6}, // max_catchup 4
	} {
		t.Run(string(tc.catchup), func(t *testing.T) {
			st := setup(t)
			upsertSchedule(t, st, store.ScheduleSpec{Name: "s", Every: time.Second, Catchup: tc.catchup, MaxCatchup: 4,
				Job: store.ScheduleJob{Kind: "k"}}, t0)
			n := newNode(t, st, "a", scheduler.Config{})
			n.tick(t, t0.Add(11*time.Second+100*time.Millisecond)) // slots 1..10 missed, 11 on time
			if got := len(slotsFired(t, st, "s")); got != tc.fired {
				t.Errorf("%d jobs, want %d", got, tc.fired)
			}
			s, err := st.ScheduleGet(t.Context(), &store.ScheduleGetParams{Name: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if s.MissedTotal != tc.missed || counterOf(t, n, "tether_schedule_missed_total") != float64(tc.missed) {
				t.Errorf("missed_total %d, want %d", s.MissedTotal, tc.missed)
			}
		})
	}
}

// counterOf reads a counter of the node, 0 when it has no series yet.
func counterOf(t *testing.T, n *node, name string) float64 {
	t.Helper()
	mfs, err := n.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
