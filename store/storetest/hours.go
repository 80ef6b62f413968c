package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// byHourRanges are the ranges testInsightsByHours lists, as minutes after
// the first hour's start: whole hours, ends inside an hour, and a range
// inside one hour.
var byHourRanges = [][2]int{{0, 180}, {17, 125}, {60, 120}, {5, 50}, {61, 119}, {-60, 300}}

// testInsightsByHours: a list by whole hours says what the minutes it
// covers say, summed per hour (the deepest sample; the counts added and
// the histograms merged per kind), over ranges whose ends fall inside an
// hour, after a minute is rolled again with less in it, and after the
// minutes pass retention. A backend may keep the hours summed apart
// (Postgres does): this holds it to its minutes.
func testInsightsByHours(t *testing.T, h *insights) {
	start := h.now().Truncate(time.Hour).Add(time.Hour)
	at := func(m int) time.Time { return start.Add(time.Duration(m) * time.Minute) }
	h.advance(start.Sub(h.now()))

	// Depth: samples across three hours; minute 54's sample (its hour's
	// last) is first the deepest of its hour, then rolled again lower
	// within the minute.
	for m := 0; m < 180; m += 6 {
		h.advance(at(m).Sub(h.now()))
		h.depthRoll(depth("q", int64((m*13)%50), int64((m*7)%20)))
		if m == 54 {
			h.depthRoll(depth("q", 99, 0))
			h.advance(10 * time.Second)
			h.depthRoll(depth("q", 1, 0))
		}
	}
	// Finished jobs: kinds a (succeeded) and b (dead) at a few minutes of
	// each hour; c dies at minute 95 alone, then is retried, and its
	// minute rolled again without it.
	var c *store.Job
	for _, m := range []int{0, 25, 59, 61, 95, 130, 170} {
		h.advance(at(m).Add(time.Second).Sub(h.now()))
		h.enqueue(spec("a", "q"), spec("b", "q"))
		leased := h.lease("w", 2, "q")
		h.advance(time.Duration(m%7) * time.Second)
		h.ack(leased[0])
		h.failNoRetry(leased[1])
		if m == 95 {
			c = h.failNoRetry(h.running("w", spec("c", "q")))
		}
		h.minuteRoll(at(m))
	}
	h.advance(at(180).Sub(h.now()))
	if _, err := h.retry(c.ID, nil); err != nil {
		t.Fatal(err)
	}
	h.minuteRoll(at(95))

	check := func(when string) {
		t.Helper()
		for _, r := range byHourRanges {
			since, until := at(r[0]), at(r[1])
			if got, want := h.depthsBy("q", since, until, time.Hour), h.deepestPerHour("q", since, until); got != want {
				t.Errorf("%s: depth by the hour from minute %d to %d: %q, want %q", when, r[0], r[1], got, want)
			}
			if got, want := h.kindHours("q", since, until, time.Hour), h.kindHours("q", since, until, 0); got != want {
				t.Errorf("%s: finished by the hour from minute %d to %d:\n%s\nwant\n%s", when, r[0], r[1], got, want)
			}
		}
	}
	check("three hours in")
	if got := h.kindHours("q", at(0), at(180), time.Hour); !strings.Contains(got, " a ") || strings.Contains(got, " c ") {
		t.Errorf("finished by the hour: %q, want kind a, and no c (retried, its minute rolled again)", got)
	}
	// Past retention, a roll of the queue drops its old minutes and their
	// hours.
	h.advance(at(180).Add(store.DepthRetention + time.Hour).Sub(h.now()))
	h.depthRoll(depth("q", 1, 1))
	for _, j := range h.lease("w", 10, "q") { // c, retried
		h.ack(j)
	}
	h.minuteRoll(h.now())
	check("past retention")
	if got := h.kindHours("q", at(-60), at(300), time.Hour); got != "" {
		t.Errorf("past retention, by the hour: %q, want nothing", got)
	}
}

// deepestPerHour lists a queue's deepest sample of each hour from its
// samples listed one by one, as depthsBy writes it.
func (h *insights) deepestPerHour(queue string, since, until time.Time) string {
	h.t.Helper()
	all, err := h.in.QueueDepthList(h.ctx, &store.QueueDepthListParams{Queue: queue, Since: since, Until: until})
	if err != nil {
		h.t.Fatalf("QueueDepthList: %v", err)
	}
	var out []string
	var last time.Time
	var best *store.QueueDepth
	flush := func() {
		if best != nil {
			out = append(out, fmt.Sprintf("%s %d/%d", best.Minute.Format("15:04"), best.Available, best.Scheduled))
		}
	}
	for i := range all {
		d := &all[i]
		if hr := d.Minute.Truncate(time.Hour); hr != last {
			flush()
			last, best = hr, d
		} else if d.Available+d.Scheduled > best.Available+best.Scheduled {
			best = d
		}
	}
	flush()
	return strings.Join(out, ", ")
}

// kindHours lists what finished per hour and kind: by step, or with step 0
// from the minutes, summed here.
func (h *insights) kindHours(queue string, since, until time.Time, step time.Duration) string {
	h.t.Helper()
	got, err := h.in.QueueMinuteList(h.ctx, &store.QueueMinuteListParams{Queue: queue, Since: since, Until: until, Step: step})
	if err != nil {
		h.t.Fatalf("QueueMinuteList: %v", err)
	}
	type key struct {
		hour time.Time
		kind string
	}
	sums := map[key]*store.KindMinute{}
	for _, m := range got {
		k := key{m.Minute.Truncate(time.Hour), m.Kind}
		s := sums[k]
		if s == nil {
			s = &store.KindMinute{Minute: k.hour, Kind: m.Kind, Wait: store.Histogram{}, Run: store.Histogram{}}
			sums[k] = s
		}
		s.Succeeded, s.Dead = s.Succeeded+m.Succeeded, s.Dead+m.Dead
		s.Wait.Merge(m.Wait)
		s.Run.Merge(m.Run)
	}
	keys := slices.SortedFunc(func(yield func(key) bool) {
		for k := range sums {
			if !yield(k) {
				return
			}
		}
	}, func(a, b key) int { return cmp.Or(a.hour.Compare(b.hour), cmp.Compare(a.kind, b.kind)) })
	var out []string
	for _, k := range keys {
		s := sums[k]
		out = append(out, fmt.Sprintf("%s %s %d/%d wait %s run %s", k.hour.Format("15:04"), k.kind, s.Succeeded, s.Dead, s.Wait, s.Run))
	}
	return strings.Join(out, "\n")
}
