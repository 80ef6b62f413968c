package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

func (h *insights) minuteRoll(minute time.Time) int {
	h.t.Helper()
	n, err := h.s.QueueMinuteRoll(h.ctx, &store.QueueMinuteRollParams{Minute: minute, Now: h.now()})
	if err != nil {
		h.t.Fatalf("QueueMinuteRoll: %v", err)
	}
	return n
}

// minutes lists a queue's rolled minutes as "hh:mm kind succeeded/dead
// wait p100 run p100" (the upper bounds of the slowest buckets).
func (h *insights) minutes(queue string, since, until time.Time) string {
	h.t.Helper()
	return h.minutesBy(queue, since, until, 0)
}

func (h *insights) minutesBy(queue string, since, until time.Time, step time.Duration) string {
	h.t.Helper()
	got, err := h.in.QueueMinuteList(h.ctx, &store.QueueMinuteListParams{Queue: queue, Since: since, Until: until, Step: step})
	if err != nil {
		h.t.Fatalf("QueueMinuteList: %v", err)
	}
	var out []string
	for _, m := range got {
		if m.Queue != queue || m.Minute.Location() != time.UTC {
			h.t.Errorf("row %+v: want queue %s, a UTC minute", m, queue)
		}
		out = append(out, fmt.Sprintf("%s %s %d/%d wait %s run %s", m.Minute.Format("15:04"), m.Kind, m.Succeeded, m.Dead,
			m.Wait.Quantile(1), m.Run.Quantile(1)))
	}
	return strings.Join(out, ", ")
}

// What finished in a minute is rolled per queue and kind: succeeded and
// dead counted, each job's last delivery timed from due to lease (wait)
// and lease to end (run); a job finished in another minute, or still
// running, is not in it; rolling a minute again writes the same; rows past
// DepthRetention are dropped.
func testInsightsQueueMinutes(t *testing.T, h *insights) {
	m0 := h.now().Truncate(time.Minute).Add(time.Minute)
	h.advance(m0.Add(time.Second).Sub(h.now())) // m0 + 1 s
	send := h.enqueue(spec("send", "mail"), spec("send", "mail"), spec("send", "mail"), spec("send", "mail"))
	h.advance(2 * time.Second)
	leased := h.lease("w", 4, "mail") // waited 2 s
	h.advance(3 * time.Second)        // ran 3 s
	h.ack(leased[0])
	h.ack(leased[1])
	if _, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: leased[2].ID, Token: token(t, leased[2]), Error: "bad",
		NoRetry: true, Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	other := h.running("w", spec("other", "mail")) // waited nothing
	h.advance(time.Second)
	h.ack(other)
	img := h.running("w", spec("resize", "img"))
	h.advance(time.Minute) // into m0+1
	h.ack(img)
	h.ack(h.running("w", spec("send", "mail"))) // waited and ran nothing
	if len(send) != 4 {
		t.Fatal("enqueued", len(send))
	}
	h.advance(time.Minute)
	// The bounds of the buckets holding each duration (store's histogram
	// rule, tested in store).
	ub := func(d time.Duration) time.Duration { h := store.Histogram{}; h.Add(d); return h.Quantile(1) }
	want := fmt.Sprintf("%[1]s other 1/0 wait %[2]s run %[3]s, %[1]s send 2/1 wait %[4]s run %[5]s",
		m0.Format("15:04"), ub(0), ub(time.Second), ub(2*time.Second), ub(3*time.Second))
	for range 2 { // a second roll of the minute writes the same
		if n := h.minuteRoll(m0); n != 2 {
			t.Errorf("roll of %s wrote %d, want 2 rows", fmtTime(m0), n)
		}
		if got := h.minutes("mail", m0.Add(-time.Hour), m0.Add(time.Hour)); got != want {
			t.Errorf("mail's minutes %q, want %q", got, want)
		}
	}
	if got := h.minutes("img", m0.Add(-time.Hour), m0.Add(time.Hour)); got != "" {
		t.Errorf("img's job finished in the next minute, not rolled yet: %q", got)
	}
	h.minuteRoll(m0.Add(time.Minute))
	if got := h.minutes("img", m0.Add(-time.Hour), m0.Add(time.Hour)); !strings.HasPrefix(got, m0.Add(time.Minute).Format("15:04")+" resize 1/0") {
		t.Errorf("img's minutes %q", got)
	}
	if got, want := h.minutes("mail", m0.Add(time.Minute), m0.Add(time.Hour)), m0.Add(time.Minute).Format("15:04")+
		fmt.Sprintf(" send 1/0 wait %s run %s", ub(0), ub(0)); got != want {
		t.Errorf("mail's second minute alone: %q, want %q", got, want)
	}
	// By the hour: each kind's minutes summed, histograms merged, at the
	// hour's start (the test's minutes fall in one hour).
	if m0.Truncate(time.Hour) != m0.Add(time.Minute).Truncate(time.Hour) {
		t.Fatalf("the test's minutes cross an hour: %s", fmtTime(m0))
	}
	hour := m0.Truncate(time.Hour).Format("15:04")
	want = fmt.Sprintf("%[1]s other 1/0 wait %[2]s run %[3]s, %[1]s send 3/1 wait %[4]s run %[5]s",
		hour, ub(0), ub(time.Second), ub(2*time.Second), ub(3*time.Second))
	if got := h.minutesBy("mail", m0.Add(-time.Hour), m0.Add(time.Hour), time.Hour); got != want {
		t.Errorf("mail by the hour: %q, want %q", got, want)
	}
	if got := h.minutes("nope", m0.Add(-time.Hour), m0.Add(time.Hour)); got != "" {
		t.Errorf("an unknown queue: %q", got)
	}
	// A week on, a roll drops what is past retention.
	h.advance(store.DepthRetention)
	h.running("w", spec("late", "mail"))
	h.advance(time.Second)
	h.ack(h.running("w", spec("late", "mail")))
	h.minuteRoll(h.now())
	if got := h.minutes("mail", m0.Add(-time.Hour), h.now().Add(time.Hour)); strings.Contains(got, " send ") || !strings.Contains(got, " late 1/0") {
		t.Errorf("a week on, mail's minutes %q: want its first minute dropped, the late one kept", got)
	}
}

// A busy minute is rolled whole: more jobs than a backend reads at once.
func testInsightsQueueMinutesMany(t *testing.T, h *insights) {
	m0 := h.now().Truncate(time.Minute).Add(time.Minute)
	h.advance(m0.Add(time.Second).Sub(h.now()))
	const n = 2500
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = spec("bulk", "many")
	}
	h.enqueue(specs...)
	p := &store.JobSettleParams{Now: h.now()}
	for len(p.Acks) < n {
		for _, j := range h.lease("w", 500, "many") {
			p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: token(t, j)})
		}
	}
	if _, err := h.s.JobSettle(h.ctx, p); err != nil {
		t.Fatal(err)
	}
	h.advance(2 * time.Minute)
	h.minuteRoll(m0)
	if got, want := h.minutes("many", m0, m0.Add(time.Minute)), fmt.Sprintf("%s bulk %d/0", m0.Format("15:04"), n); !strings.HasPrefix(got, want+" ") {
		t.Errorf("a busy minute: %q, want %q", got, want)
	}
}
