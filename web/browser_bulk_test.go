package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tetherq/tether/store"
)

// Five dead jobs selected on /dead and retried: the click shows a page
// naming the five and changes nothing; its button retries them and comes
// back to the list.
func testBulkRetry(t *testing.T, ctx context.Context, srv *server) {
	const queue = "bulk-five"
	specs := make([]store.JobSpec, 5)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "import_row", Queue: queue}
	}
	res, err := srv.store.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	leased, err := srv.store.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: "importer", Queues: []string{queue}, Max: 5, Now: time.Now()})
	if err != nil || len(leased) != 5 {
		t.Fatalf("leased %d (%v)", len(leased), err)
	}
	p := &store.JobSettleParams{Now: time.Now()}
	for _, j := range leased {
		p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "bad row", NoRetry: true})
	}
	if _, err := srv.store.JobSettle(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	states := func() string {
		var out []string
		for _, j := range res.Jobs {
			var got apiJob
			srv.call(t, "GET", "/v1/jobs/"+j.ID, nil, &got)
			out = append(out, got.State)
		}
		return strings.Join(out, " ")
	}
	do(t, ctx, "open /dead?queue="+queue, 10*time.Second, chromedp.Navigate(srv.url+"/dead?queue="+queue),
		chromedp.WaitVisible(chromedp.CSS(`#dead input[data-select-all]`)))
	do(t, ctx, "select all five", 5*time.Second, clickNow(`#dead input[data-select-all]`))
	if n := eval[int](t, ctx, `document.querySelectorAll('input[form="dead-bulk"][name="id"]:checked').length`); n != 5 {
		t.Fatalf("%d jobs selected, want 5", n)
	}
	if status := submit(t, ctx, `#dead-bulk button[type="submit"]:not([name])`); status != 200 {
		t.Fatalf("retry selected answered %d, want 200 with a confirmation", status)
	}
	if h1 := eval[string](t, ctx, `document.querySelector("main h1").textContent`); h1 != "Retry 5 jobs?" {
		t.Errorf("confirmation titled %q", h1)
	}
	if got := states(); got != "dead dead dead dead dead" {
		t.Fatalf("before confirming, the jobs are %s", got)
	}
	if wide := eval[[]string](t, ctx, overflow); len(wide) > 0 {
		t.Errorf("the confirmation scrolls sideways: %q", wide)
	}
	screenshot(t, ctx, shots(t), "confirm-1280")
	if status := submit(t, ctx, `form.confirm-form button[type="submit"]`); status != 200 {
		t.Fatalf("confirm answered %d", status)
	}
	if url := eval[string](t, ctx, `location.pathname + location.search`); url != "/dead?queue="+queue {
		t.Errorf("after confirming the browser is at %s", url)
	}
	if flash := eval[string](t, ctx, `(document.querySelector(".flash-ok") || {}).textContent || ""`); !strings.Contains(flash, "Retried 5 jobs.") {
		t.Errorf("flash %q", flash)
	}
	if got := states(); got != "available available available available available" {
		t.Errorf("after confirming, the jobs are %s", got)
	}
}
