package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

func (h *insights) depthRoll(depths ...store.QueueDepth) int {
	h.t.Helper()
	n, err := h.s.QueueDepthRoll(h.ctx, &store.QueueDepthRollParams{Depths: depths, Now: h.now()})
	if err != nil {
		h.t.Fatalf("QueueDepthRoll: %v", err)
	}
	return n
}

// depths lists a queue's samples as "hh:mm available/scheduled".
func (h *insights) depths(queue string, since, until time.Time) string {
	h.t.Helper()
	return h.depthsBy(queue, since, until, 0)
}

func (h *insights) depthsBy(queue string, since, until time.Time, step time.Duration) string {
	h.t.Helper()
	got, err := h.in.QueueDepthList(h.ctx, &store.QueueDepthListParams{Queue: queue, Since: since, Until: until, Step: step})
	if err != nil {
		h.t.Fatalf("QueueDepthList: %v", err)
	}
	var out []string
	for _, d := range got {
		if d.Queue != queue || d.Minute.Location() != time.UTC || d.Minute.Second() != 0 || d.Minute.Nanosecond() != 0 {
			h.t.Errorf("sample %+v: want queue %s, a UTC minute", d, queue)
		}
		out = append(out, fmt.Sprintf("%s %d/%d", d.Minute.Format("15:04"), d.Available, d.Scheduled))
	}
	return strings.Join(out, ", ")
}

func depth(queue string, available, scheduled int64) store.QueueDepth {
	return store.QueueDepth{Queue: queue, Available: available, Scheduled: scheduled}
}

// A queue's depth is kept per minute: a later sample of the same minute
// replaces the earlier, each queue on its own; a listing covers [Since's
// minute, Until); minutes past DepthRetention are dropped.
func testInsightsQueueDepth(t *testing.T, h *insights) {
	m0 := h.now().Truncate(time.Minute)
	at := func(m int) time.Time { return m0.Add(time.Duration(m) * time.Minute) }
	hm := func(m int) string { return at(m).Format("15:04") }
	if got := h.depths("emails", at(-60), at(60)); got != "" {
		t.Errorf("before any sample: %q", got)
	}
	if n := h.depthRoll(); n != 0 {
		t.Errorf("an empty roll wrote %d", n)
	}
	h.depthRoll(depth("emails", 3, 1), depth("images", 0, 2))
	h.advance(20 * time.Second)
	if n := h.depthRoll(depth("emails", 5, 1)); n != 1 {
		t.Errorf("one sample wrote %d", n)
	}
	h.advance(time.Minute)
	h.depthRoll(depth("emails", 4, 0))
	h.advance(2 * time.Minute)
	h.depthRoll(depth("emails", 0, 0))
	for _, tt := range []struct {
		queue        string
		since, until time.Time
		want         string
	}{
		{"emails", at(-60), at(60), fmt.Sprintf("%s 5/1, %s 4/0, %s 0/0", hm(0), hm(1), hm(3))},
		{"images", at(-60), at(60), hm(0) + " 0/2"},
		{"emails", at(1).Add(30 * time.Second), at(3), hm(1) + " 4/0"}, // Since's minute in, Until out
		{"emails", at(0), at(3).Add(time.Second), fmt.Sprintf("%s 5/1, %s 4/0, %s 0/0", hm(0), hm(1), hm(3))},
		{"emails", at(2), at(3), ""},
		{"nope", at(-60), at(60), ""},
		{"emails", at(-60), at(1).Add(store.DepthRetention), hm(1) + " 4/0, " + hm(3) + " 0/0"}, // at most MaxDepthMinutes
	} {
		if got := h.depths(tt.queue, tt.since, tt.until); got != tt.want {
			t.Errorf("%s from %s to %s: %q, want %q", tt.queue, fmtTime(tt.since), fmtTime(tt.until), got, tt.want)
		}
	}
	// By step: each step's deepest sample. The steps are aligned to the
	// epoch; the test's minutes fall in one hour.
	if at(0).Truncate(time.Hour) != at(3).Truncate(time.Hour) {
		t.Fatalf("the test's minutes cross an hour: %s", fmtTime(at(0)))
	}
	for step, want := range map[time.Duration]string{
		time.Minute: fmt.Sprintf("%s 5/1, %s 4/0, %s 0/0", hm(0), hm(1), hm(3)),
		time.Hour:   hm(0) + " 5/1",
	} {
		if got := h.depthsBy("emails", at(-60), at(60), step); got != want {
			t.Errorf("emails by %s: %q, want %q", step, got, want)
		}
	}
	h.depthRoll(depth("emails", 2, 9)) // at(3) again, now the deepest
	if got, want := h.depthsBy("emails", at(-60), at(60), time.Hour), hm(3)+" 2/9"; got != want {
		t.Errorf("emails by the hour once at(3) is the deepest: %q, want %q", got, want)
	}
	h.depthRoll(depth("emails", 0, 0))

	// A week on, a sample drops the minutes past retention.
	h.advance(store.DepthRetention - 2*time.Minute) // at(1) is past retention, at(3) not
	if n := h.depthRoll(depth("emails", 9, 9)); n < 3 {
		t.Errorf("roll a week on wrote and dropped %d, want the sample and emails' two oldest minutes", n)
	}
	want := fmt.Sprintf("%s 0/0, %s 9/9", hm(3), h.now().Truncate(time.Minute).Format("15:04"))
	if got := h.depths("emails", at(-60), h.now().Add(time.Minute)); got != want {
		t.Errorf("a week on: %q, want %q", got, want)
	}
}
