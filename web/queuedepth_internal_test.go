package web

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// One bar per step ending at end: each the step's deepest sample, stacked
// available under scheduled; a step without a sample is an empty hover
// target saying so; samples outside the range are ignored.
func TestLayoutDepth(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return end.Add(-d) }
	sample := func(ago time.Duration, a, s int64) store.QueueDepth {
		return store.QueueDepth{Queue: "q", Minute: at(ago), Available: a, Scheduled: s}
	}
	day := depthRanges[1]
	m := layoutDepth([]store.QueueDepth{
		sample(25*time.Hour, 500, 0),             // before the range
		sample(24*time.Hour, 3, 1),               // the first bar
		sample(24*time.Hour-time.Minute, 30, 8),  // its peak
		sample(24*time.Hour-2*time.Minute, 1, 0), // smaller
		sample(10*time.Minute, 0, 0),             // the last bar: empty but sampled
		sample(0, 999, 0),                        // at end: after the range
	}, day, end)
	if len(m.Bars) != 144 || !m.Sampled {
		t.Fatalf("%d bars (sampled %v), want 144", len(m.Bars), m.Sampled)
	}
	if m.Axis.Top != 40 {
		t.Errorf("axis top %d, want 40 for a peak of 38", m.Axis.Top)
	}
	first := m.Bars[0]
	if first.Title != "Jan 1 12:00 UTC: 30 available, 8 scheduled" || len(first.Segs) != 2 ||
		first.Segs[0].Class != "bar-available" || first.Segs[1].Class != "bar-scheduled" || first.Segs[0].H != "75.0" {
		t.Errorf("first bar %+v", first)
	}
	if b := m.Bars[1]; !strings.HasSuffix(b.Title, "no sample") || b.Segs[0].Class != "bar-none" {
		t.Errorf("an unsampled bar %+v", b)
	}
	if b := m.Bars[143]; !strings.HasSuffix(b.Title, "0 available, 0 scheduled") || b.Segs[0].Class != "bar-none" {
		t.Errorf("the last bar %+v", b)
	}
	if m := layoutDepth(nil, depthRanges[0], end); m.Sampled || len(m.Bars) != 60 {
		t.Errorf("no samples: sampled %v, %d bars", m.Sampled, len(m.Bars))
	}
}
