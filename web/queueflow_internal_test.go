package web

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// Minutes sum into one bar per step; each kind's histograms merge over
// the whole range into its percentiles; minutes outside the range are left
// out.
func TestLayoutFlow(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	hist := func(ds ...time.Duration) store.Histogram {
		h := store.Histogram{}
		for _, d := range ds {
			h.Add(d)
		}
		return h
	}
	row := func(ago time.Duration, kind string, succ, dead int64, wait, run store.Histogram) store.KindMinute {
		return store.KindMinute{Queue: "q", Kind: kind, Minute: end.Add(-ago), Succeeded: succ, Dead: dead, Wait: wait, Run: run}
	}
	m := layoutFlow([]store.KindMinute{
		row(2*time.Hour, "old", 99, 0, hist(time.Hour), hist(time.Hour)), // before the range
		row(60*time.Minute, "send", 3, 1, hist(time.Second, time.Second), hist(2*time.Second, 2*time.Second)),
		row(59*time.Minute, "send", 5, 0, hist(time.Second, 100*time.Second), hist(2*time.Second, 2*time.Second)),
		row(time.Minute, "resize", 2, 0, store.Histogram{}, store.Histogram{}), // never timed
	}, depthRanges[0], end)
	if len(m.Bars) != 60 || m.Succeeded != 10 || m.Dead != 1 {
		t.Fatalf("%d bars, %d succeeded, %d dead; want 60, 10, 1", len(m.Bars), m.Succeeded, m.Dead)
	}
	if b := m.Bars[0]; b.Title != "11:00 UTC: 3 succeeded, 1 dead" || len(b.Segs) != 2 {
		t.Errorf("first bar %+v", b)
	}
	if b := m.Bars[59]; b.Title != "11:59 UTC: 2 succeeded, 0 dead" {
		t.Errorf("last bar %+v", b)
	}
	var kinds []string
	for _, k := range m.Kinds {
		kinds = append(kinds, k.Kind+" "+k.Wait50+" "+k.Wait99+" "+k.Run50)
	}
	want := "resize — — —, send ≤ 1.0 s ≤ 1 min 50 s ≤ 2.0 s" // the upper bounds of the buckets: 1.024 s, 110 s, 2.048 s
	if got := strings.Join(kinds, ", "); got != want {
		t.Errorf("kinds %q, want %q", got, want)
	}
}
