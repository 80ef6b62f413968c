package store

import (
	"testing"
	"time"
)

// TestSchedulePlan: a schedule firing every second, last due 100 s ago,
// looked at with a one-second tick. The slot at now−0.5 s is on time; the
// 100 before it were missed.
func TestSchedulePlan(t *testing.T) {
	now := utc("2026-01-01T00:10:00Z").Add(500 * time.Millisecond)
	onTime := now.Add(-500 * time.Millisecond) // the slot at :10:00
	sec := func(n int) time.Time { return onTime.Add(time.Duration(n) * time.Second) }
	tests := []struct {
		name    string
		catchup Catchup
		max     int
		window  time.Duration
		// plan
		slots  []time.Time
		missed int64
	}{
		{"none fires the slot on time", CatchupNone, 0, time.Hour, []time.Time{sec(0)}, 100},
		{"latest adds the newest missed", CatchupLatest, 0, time.Hour, []time.Time{sec(-1), sec(0)}, 99},
		{"all adds the newest max, oldest first", CatchupAll, 3, time.Hour, []time.Time{sec(-3), sec(-2), sec(-1), sec(0)}, 97},
		{"all keeps inside the window", CatchupAll, 100, 2500 * time.Millisecond, []time.Time{sec(-2), sec(-1), sec(0)}, 98},
		{"latest outside the window fires nothing missed", CatchupLatest, 0, 400 * time.Millisecond, []time.Time{sec(0)}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Schedule{ScheduleSpec: ScheduleSpec{Name: "s", Every: time.Second, Catchup: tc.catchup,
				MaxCatchup: tc.max, CatchupWindow: tc.window}, NextFireAt: sec(-100)}
			p := s.Plan(now, time.Second)
			if !equalTimes(p.Slots, tc.slots) {
				t.Errorf("slots = %v, want %v", p.Slots, tc.slots)
			}
			if p.Missed != tc.missed {
				t.Errorf("missed = %d, want %d", p.Missed, tc.missed)
			}
			if !p.Next.Equal(sec(1)) {
				t.Errorf("next = %s, want %s", p.Next, sec(1))
			}
		})
	}
}

// A cron schedule down for a day counts each slot it missed before the
// window, and fires as the policy says inside it.
func TestSchedulePlanCron(t *testing.T) {
	s := &Schedule{ScheduleSpec: ScheduleSpec{Name: "s", Cron: "*/10 * * * *", Timezone: "UTC",
		Catchup: CatchupAll, MaxCatchup: 100, CatchupWindow: 30 * time.Minute},
		NextFireAt: utc("2026-01-01T00:00:00Z")}
	p := s.Plan(utc("2026-01-02T00:00:05Z"), time.Second)
	// 00:00 of the 2nd is 5 s old: missed, but inside the window.
	want := []time.Time{utc("2026-01-01T23:40:00Z"), utc("2026-01-01T23:50:00Z"), utc("2026-01-02T00:00:00Z")}
	if !equalTimes(p.Slots, want) {
		t.Errorf("slots = %v, want %v", p.Slots, want)
	}
	// 145 slots from 00:00 to 24:00 inclusive.
	if p.Missed != 145-3 {
		t.Errorf("missed = %d, want 142", p.Missed)
	}
	if !p.Next.Equal(utc("2026-01-02T00:10:00Z")) {
		t.Errorf("next = %s", p.Next)
	}
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// Jitter is the same for the same (name, slot), within its bound, and
// differs across slots.
func TestScheduleJitter(t *testing.T) {
	slot := utc("2026-01-01T00:00:00Z")
	max := 10 * time.Second
	seen := map[time.Duration]bool{}
	for i := range 50 {
		at := slot.Add(time.Duration(i) * time.Minute)
		j := ScheduleJitter("report", at, max)
		if j != ScheduleJitter("report", at, max) || j < 0 || j > max {
			t.Fatalf("jitter %s for slot %d", j, i)
		}
		seen[j] = true
	}
	if len(seen) < 10 {
		t.Errorf("%d distinct jitters over 50 slots", len(seen))
	}
	if ScheduleJitter("report", slot, 0) != 0 {
		t.Error("jitter without a bound")
	}
}
