package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tetherq/tether/store"
)

// A queue burns down over half an hour, its depth sampled each minute as
// the scheduler samples it: /queues/burn charts it, the oldest bar the
// tallest, with the jobs it finished and their run times by kind, at 1280
// and 390 px, light and dark, without sideways scrolling.
func testQueueChart(t *testing.T, ctx context.Context, srv *server) {
	const queue, minutes, perMinute = "burn", 30, 4
	specs := make([]store.JobSpec, minutes*perMinute)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "import_row", Queue: queue}
	}
	if _, err := srv.store.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for m := minutes; m >= 1; m-- {
		now := time.Now()
		queues, err := srv.store.QueueList(t.Context(), &store.QueueListParams{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queues {
			if q.Name != queue {
				continue
			}
			d := store.QueueDepth{Queue: queue, Available: q.Counts[store.StateAvailable], Scheduled: q.Counts[store.StateScheduled]}
			if _, err := srv.store.QueueDepthRoll(t.Context(), &store.QueueDepthRollParams{Depths: []store.QueueDepth{d},
				Now: now.Add(-time.Duration(m) * time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		leased, err := srv.store.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: "burner", Queues: []string{queue}, Max: perMinute, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		p := &store.JobSettleParams{Now: now}
		for _, j := range leased {
			p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
		}
		if _, err := srv.store.JobSettle(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	// The jobs finished this minute: roll it up now, as the scheduler will
	// once it has settled.
	if _, err := srv.store.QueueMinuteRoll(t.Context(), &store.QueueMinuteRollParams{Minute: time.Now(), Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	heights := `Array.from(document.querySelectorAll('[data-chart="depth"] g'), (g) =>
		Array.from(g.querySelectorAll("rect.bar-available"), (r) => r.height.baseVal.value).reduce((a, b) => a + b, 0))`
	defer do(t, ctx, "back to 1280 px, light", 5*time.Second, chromedp.EmulateViewport(1280, 900), darkMode(false))
	for _, v := range []viewport{{name: "1280", width: 1280, height: 900}, {name: "phone", width: 390, height: 844},
		{name: "phone-dark", width: 390, height: 844, dark: true}, {name: "1280-dark", width: 1280, height: 900, dark: true}} {
		do(t, ctx, "view "+v.name, 5*time.Second, chromedp.EmulateViewport(v.width, v.height), darkMode(v.dark))
		openPage(t, ctx, srv, "/queues/"+queue)
		bars := eval[[]float64](t, ctx, heights)
		var drawn []float64
		for _, h := range bars {
			if h > 0 {
				drawn = append(drawn, h)
			}
		}
		if len(bars) != 60 || len(drawn) < minutes-1 {
			t.Fatalf("%s: %d bars, %d with available jobs; want 60, %d or so", v.name, len(bars), len(drawn), minutes)
		}
		if drawn[0] <= drawn[len(drawn)-1] {
			t.Errorf("%s: the burn-down's first bar (%.1f) is not above its last (%.1f)", v.name, drawn[0], drawn[len(drawn)-1])
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-chart="throughput"] rect.bar-succeeded').length`); n < 1 {
			t.Errorf("%s: no throughput bar", v.name)
		}
		if got := eval[string](t, ctx, `(document.querySelector('tr[data-kind="import_row"] [data-p="run50"]') || {}).textContent || ""`); !strings.HasPrefix(got, "≤ ") {
			t.Errorf("%s: import_row's run p50 reads %q", v.name, got)
		}
		if wide := eval[[]string](t, ctx, overflow); len(wide) > 0 {
			t.Errorf("/queues/%s at %s scrolls sideways: %q", queue, v.name, wide)
		}
		screenshot(t, ctx, shots(t), "queue-burn-"+v.name)
	}
}
