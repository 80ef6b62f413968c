package web_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tetherq/tether/store"
)

// viewport is a window the pages are laid out in.
type viewport struct {
	name          string
	width, height int64
	dark          bool
	pages         []string // the pages to look at; nil: every page
}

var viewports = []viewport{
	{name: "1280", width: 1280, height: 900},
	{name: "phone", width: 390, height: 844},
	// Dark mode changes colours only: a page of each kind is enough.
	{name: "phone-dark", width: 390, height: 844, dark: true, pages: []string{"overview", "queue", "workers", "nodes", "orphans", "dead", "job-dead"}},
	{name: "1280-dark", width: 1280, height: 900, dark: true, pages: []string{"overview", "queue", "orphans", "dead", "job-dead"}},
}

// overflow lists what scrolls sideways on the page: the document itself,
// or a box inside it (a table in its .table-wrap) that is wider than the
// room it has. Code blocks may scroll; nothing else should need to.
const overflow = `(() => {
	const out = [];
	const doc = document.documentElement;
	if (doc.scrollWidth > window.innerWidth) out.push("the page: " + doc.scrollWidth + " px in " + window.innerWidth);
	document.querySelectorAll("main *, header *").forEach((el) => {
		if (el.closest("pre")) return;
		const x = getComputedStyle(el).overflowX;
		if ((x === "auto" || x === "scroll") && el.scrollWidth > el.clientWidth + 1) {
			out.push((el.id || el.className || el.tagName) + ": " + el.scrollWidth + " px in " + el.clientWidth);
		}
	});
	return out;
})()`

// testLayout loads every page at 1280 px and at phone width (390×844, in
// light and dark), checks that nothing scrolls sideways, and saves a
// screenshot of each. A limping worker keeps jobs on /orphans awaiting
// recovery, so that table is laid out too.
func testLayout(t *testing.T, ctx context.Context, srv *server, dead []string) {
	limping(t, srv, "w-limping", 2)
	dir := shots(t)
	pages := pagesToCheck(t, srv, dead)
	defer do(t, ctx, "back to 1280 px, light", 5*time.Second, chromedp.EmulateViewport(1280, 900), darkMode(false))
	for _, v := range viewports {
		do(t, ctx, "view "+v.name, 5*time.Second, chromedp.EmulateViewport(v.width, v.height), darkMode(v.dark))
		for _, p := range pages {
			if v.pages != nil && !slices.Contains(v.pages, p.name) {
				continue
			}
			openPage(t, ctx, srv, p.path)
			if p.name == "orphans" {
				do(t, ctx, "the limping worker's jobs on /orphans", 10*time.Second,
					chromedp.WaitVisible(chromedp.CSS(`#held tr[data-worker-id="w-limping"]`)))
			}
			if wide := eval[[]string](t, ctx, overflow); len(wide) > 0 {
				t.Errorf("%s at %s: scrolls sideways: %q", p.path, v.name, wide)
			}
			screenshot(t, ctx, dir, p.name+"-"+v.name)
		}
	}
	t.Logf("screenshots in %s", dir)
}

// limping registers a worker that leases n jobs of a queue of its own and
// then keeps heartbeating a second late: always suspect, never dead, so
// its jobs stay on /orphans awaiting recovery until the test ends.
func limping(t *testing.T, srv *server, worker string, n int) {
	t.Helper()
	ctx := t.Context()
	late := func() time.Time { return time.Now().Add(-time.Second) }
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "transcode", Queue: "video-" + worker}
	}
	if _, err := srv.store.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: late()}); err != nil {
		t.Fatal(err)
	}
	jobs, err := srv.store.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{"video-" + worker}, Max: n, Now: late()})
	if err != nil || len(jobs) != n {
		t.Fatalf("%s leased %d jobs (%v), want %d", worker, len(jobs), err, n)
	}
	hctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(bHeartbeat / 2)
		defer tick.Stop()
		for {
			_, _ = srv.store.WorkerHeartbeat(hctx, &store.WorkerHeartbeatParams{ID: worker, Now: late()})
			select {
			case <-hctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { stop(); <-done })
}
