package web_test

// Browser tests: the real router (API and dashboard), a real store and the
// real scheduler, in-process on httptest, driven by Debian's headless
// Chromium through chromedp. Every scenario runs on each backend (a SQLite
// file, a schema on the test Postgres, a key prefix on the test
// redis-server), so the pages, their live updates and their actions are
// checked against all three. Settings are the short ones of the process
// tests (--dead-after 2s --tick 200ms) with heartbeats due every 250 ms, so
// a silent worker is suspect after half a second and its jobs wait for
// recovery long enough for a page, fed once a second, to show them.
//
// The layout (browser_layout_test.go) is checked on SQLite only: it is the
// stylesheet's, not the store's. Its screenshots (1280 px, phone width,
// dark) go to the directory in TETHER_SCREENSHOTS, or to a temp dir.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

func TestBrowser(t *testing.T) {
	exe := chromium(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			srv := startServer(t, b.open(t))
			dead := srv.seed(t)
			srv.startScheduler(t)
			ctx := browser(t, exe)

			t.Run("OrphansRescuedLive", func(t *testing.T) { testOrphansLive(t, ctx, srv) })
			t.Run("WorkersLive", func(t *testing.T) { testWorkersLive(t, ctx, srv) })
			t.Run("NodesLive", func(t *testing.T) { testNodesLive(t, ctx, srv) })
			t.Run("Pages", func(t *testing.T) { testPages(t, ctx, srv, dead) })
			t.Run("RetryDead", func(t *testing.T) { testRetryDead(t, ctx, srv, dead[0]) })
			t.Run("BulkRetryAsksFirst", func(t *testing.T) { testBulkRetry(t, ctx, srv) })
			t.Run("PauseQueue", func(t *testing.T) { testPauseQueue(t, ctx, srv) })
			t.Run("QueueChart", func(t *testing.T) { testQueueChart(t, ctx, srv) })
			t.Run("WithoutJavaScript", func(t *testing.T) { testWithoutJS(t, ctx, srv) })
			t.Run("CrossSiteForm", func(t *testing.T) { testCrossSiteForm(t, ctx, srv, dead[1]) })
			if b.layout {
				t.Run("Layout", func(t *testing.T) { testLayout(t, ctx, srv, dead) })
			}
		})
	}
}

// record makes the page note every row it ever shows, and sets a mark
// that a reload would lose.
const record = `window.__mark = "no reload"; window.__seen = {held: {}, rescues: {}, states: {}};
	setInterval(function () {
		document.querySelectorAll("#held tr[data-job-id]").forEach(function (r) { __seen.held[r.dataset.jobId] = true; });
		document.querySelectorAll("#rescues tr[data-job-id]").forEach(function (r) { __seen.rescues[r.dataset.jobId] = true; });
		document.querySelectorAll("#workers tr[data-worker-id]").forEach(function (r) {
			var b = r.querySelector(".badge");
			if (b) __seen.states[r.dataset.workerId + " " + b.textContent] = true;
		});
	}, 25); true`

// pollPage waits up to 10 s for the page function fn(args) to be true.
func pollPage(t *testing.T, ctx context.Context, what, fn string, args ...any) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(pctx, chromedp.PollFunction[bool](fn, chromedp.WithPollingArgs(args...),
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(9*time.Second))); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// silentWorker registers a worker and has it lease n jobs of a fresh
// queue; it never heartbeats again. It returns the jobs' ids.
func silentWorker(t *testing.T, srv *server, worker string, n int) []string {
	t.Helper()
	specs := make([]map[string]any, n)
	for i := range specs {
		specs[i] = map[string]any{"kind": "transcode", "queue": "video-" + worker}
	}
	srv.call(t, "POST", "/v1/jobs/batch", map[string]any{"jobs": specs}, nil)
	srv.call(t, "POST", "/v1/workers", map[string]any{"id": worker, "queues": []string{"video-" + worker}}, nil)
	var leased struct{ Jobs []apiJob }
	srv.call(t, "POST", "/v1/lease", map[string]any{"worker_id": worker, "queues": []string{"video-" + worker}, "max": n}, &leased)
	if len(leased.Jobs) != n {
		t.Fatalf("%s leased %d jobs, want %d", worker, len(leased.Jobs), n)
	}
	ids := make([]string, n)
	for i, j := range leased.Jobs {
		ids[i] = j.ID
	}
	return ids
}

func openLive(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	do(t, ctx, "open "+url, 10*time.Second, chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`#live[data-state="on"]`)))
	eval[bool](t, ctx, record)
}

// A worker leases jobs and falls silent: /orphans shows its jobs awaiting
// recovery, then rescued, without a reload.
func testOrphansLive(t *testing.T, ctx context.Context, srv *server) {
	openLive(t, ctx, srv.url+"/orphans")
	start := time.Now()
	ids := silentWorker(t, srv, "w-doomed", 3)
	pollPage(t, ctx, "jobs awaiting recovery on /orphans",
		`(ids) => window.__mark === "no reload" && ids.every((id) => __seen.held[id])`, ids)
	pollPage(t, ctx, "jobs rescued on /orphans", `(ids) => window.__mark === "no reload"
		&& ids.every((id) => __seen.rescues[id])
		&& ids.every((id) => !document.querySelector('#held tr[data-job-id="' + id + '"]'))`, ids)
	rescued := time.Since(start)
	t.Logf("the silent worker's jobs show as rescued %.1f s after its lease (dead after %s, tick %s)",
		rescued.Seconds(), bDeadAfter, bTick)
	if rescued > 5*time.Second {
		t.Errorf("rescue shown %s after the worker fell silent, want within 5 s", rescued)
	}
	text := eval[string](t, ctx, `document.querySelector('#rescues tr[data-job-id="`+ids[0]+`"]').innerText`)
	for _, want := range []string{"w-doomed", "node-a", "transcode"} {
		if !strings.Contains(text, want) {
			t.Errorf("rescue row %q lacks %q", text, want)
		}
	}
}

// A worker falls silent: /workers shows it suspect, then dead, and
// its jobs gone from it, without a reload.
func testWorkersLive(t *testing.T, ctx context.Context, srv *server) {
	openLive(t, ctx, srv.url+"/workers")
	ids := silentWorker(t, srv, "w-quiet", 1)
	// Live lasts two heartbeat intervals, shorter than a poll: the page may
	// first see the worker suspect.
	pollPage(t, ctx, "w-quiet suspect, then dead on /workers", `(id) => window.__mark === "no reload"
		&& __seen.states["w-quiet suspect"] && __seen.states["w-quiet dead"]
		&& !document.querySelector('#workers tr[data-worker-id="w-quiet"] a[title="' + id + '"]')`, ids[0])
}

type pageCheck struct {
	name, path, want string
}

// pagesToCheck is every page of the dashboard, with text each must show.
func pagesToCheck(t *testing.T, srv *server, dead []string) []pageCheck {
	t.Helper()
	var held struct{ Jobs []apiJob }
	srv.call(t, "GET", "/v1/jobs?queue=emails&state=running&limit=1", nil, &held)
	if len(held.Jobs) == 0 {
		t.Fatal("no running job in emails")
	}
	// Paused, so that no fire adds a job to the scene whatever the hour.
	srv.call(t, "PUT", "/v1/schedules/nightly-report", map[string]any{"cron": "0 2 * * 1-5",
		"timezone": "America/New_York", "paused": true, "job": map[string]any{"kind": "build_report", "queue": "reports"}}, nil)
	return []pageCheck{
		{"overview", "/", "Throughput, last hour"},
		{"queues", "/queues", "emails"},
		{"queue", "/queues/emails", "Recent jobs"},
		{"workers", "/workers", "mailer-1"},
		{"nodes", "/nodes", "node-a"},
		{"orphans", "/orphans", "Recent rescues"},
		{"retries", "/retries", "upstream 503"},
		{"dead", "/dead", "template"},
		{"jobs", "/jobs", "send_email"},
		{"jobs-search", "/jobs?queue=images&state=dead", "resize_image"},
		{"job-dead", "/jobs/" + dead[0], "template"},
		{"job-running", "/jobs/" + held.Jobs[0].ID, "Held by"},
		{"schedules", "/schedules", "at 02:00 on Monday to Friday"},
		{"schedule", "/schedules/nightly-report", "Next fires"},
	}
}

// openPage loads path and waits for its heading.
func openPage(t *testing.T, ctx context.Context, srv *server, path string) {
	t.Helper()
	do(t, ctx, "open "+path, 10*time.Second, chromedp.Navigate(srv.url+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// Every page renders with its content, and every link on it leads to a
// page that answers 200.
func testPages(t *testing.T, ctx context.Context, srv *server, dead []string) {
	links := map[string][]string{} // path?query -> the pages linking to it
	for _, p := range pagesToCheck(t, srv, dead) {
		openPage(t, ctx, srv, p.path)
		body := eval[string](t, ctx, `document.querySelector("main").textContent`)
		if !strings.Contains(body, p.want) {
			t.Errorf("%s: page lacks %q", p.path, p.want)
		}
		if errs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".note-error"), (e) => e.textContent)`); len(errs) > 0 {
			t.Errorf("%s: a panel failed: %q", p.path, errs)
		}
		hrefs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("a[href]"), (a) => a.href)`)
		for _, h := range hrefs {
			u, err := url.Parse(h)
			if err != nil || !strings.HasPrefix(h, srv.url) {
				continue // another site's: none today
			}
			u.Fragment = ""
			key := u.RequestURI()
			if !slices.Contains(links[key], p.path) {
				links[key] = append(links[key], p.path)
			}
		}
	}
	for link, from := range links {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.url+link, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("link %s (on %s) answers %d", link, strings.Join(from, ", "), res.StatusCode)
		}
	}
	t.Logf("checked %d distinct links", len(links))
}

func darkMode(on bool) chromedp.Action[chromedp.Void] {
	scheme := "light"
	if on {
		scheme = "dark"
	}
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// Retry on a dead job's row: the job leaves /dead and is available again.
func testRetryDead(t *testing.T, ctx context.Context, srv *server, id string) {
	row := `#dead tr[data-job-id="` + id + `"]`
	do(t, ctx, "open /dead", 10*time.Second, chromedp.Navigate(srv.url+"/dead"), chromedp.WaitVisible(chromedp.CSS(row)))
	if status := submit(t, ctx, row+` form[action$="/retry"] button`); status != 200 {
		t.Fatalf("after retry: page status %d", status)
	}
	if path := eval[string](t, ctx, `location.pathname`); path != "/dead" {
		t.Errorf("after retry the browser is at %s, want back at /dead", path)
	}
	flash := eval[string](t, ctx, `(document.querySelector(".flash-ok") || {}).textContent || ""`)
	if !strings.Contains(flash, "is back in queue emails") {
		t.Errorf("flash after retry = %q", flash)
	}
	if eval[bool](t, ctx, `!!document.querySelector('`+row+`')`) {
		t.Error("the retried job is still listed on /dead")
	}
	var j apiJob
	srv.call(t, "GET", "/v1/jobs/"+id, nil, &j)
	if j.State != "available" && j.State != "running" {
		t.Errorf("retried job is %s, want available", j.State)
	}
}

// Pause on a queue's row: the queue reads paused, and leases skip it.
func testPauseQueue(t *testing.T, ctx context.Context, srv *server) {
	row := `#queues tr[data-queue="reports"]`
	do(t, ctx, "open /queues", 10*time.Second, chromedp.Navigate(srv.url+"/queues"), chromedp.WaitVisible(chromedp.CSS(row)))
	submit(t, ctx, row+` form[action$="/pause"] button`)
	if badge := eval[string](t, ctx, `document.querySelector('`+row+` .badge').textContent`); badge != "paused" {
		t.Errorf("reports reads %q after pause, want paused", badge)
	}
	if !eval[bool](t, ctx, `!!document.querySelector('`+row+` form[action$="/resume"]')`) {
		t.Error("a paused queue offers no resume button")
	}
	var qs struct {
		Queues []struct {
			Name   string `json:"name"`
			Paused bool   `json:"paused"`
		} `json:"queues"`
	}
	srv.call(t, "GET", "/v1/queues", nil, &qs)
	for _, q := range qs.Queues {
		if q.Name == "reports" && !q.Paused {
			t.Error("the API does not see reports paused")
		}
	}
	submit(t, ctx, row+` form[action$="/resume"] button`)
}

// With scripts off, pages render and a form POST redirects back with the
// flash: nothing depends on the script.
func testWithoutJS(t *testing.T, ctx context.Context, srv *server) {
	tab := ctx
	scripts := func(off bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
			return err
		})
	}
	defer do(t, tab, "scripts back on", 5*time.Second, scripts(false))
	noScript := scripts(true)
	row := `#queues tr[data-queue="images"]`
	do(t, tab, "open /queues without scripts", 10*time.Second, noScript, chromedp.Navigate(srv.url+"/queues"), chromedp.WaitVisible(chromedp.CSS(row)))
	submit(t, tab, row+` form[action$="/pause"] button`)
	text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Paused queue images.") {
		t.Errorf("no flash after pausing without scripts")
	}
	submit(t, tab, row+` form[action$="/resume"] button`)
}

// A form on another site that posts to the dashboard is refused with 403
// and changes nothing.
func testCrossSiteForm(t *testing.T, ctx context.Context, srv *server, id string) {
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/jobs/%s/retry"><button id="go">win a prize</button></form>`, srv.url, id)
	}))
	defer evil.Close()
	// localhost and 127.0.0.1 are different sites to the browser.
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	do(t, ctx, "open the other site", 10*time.Second, chromedp.Navigate(evilURL), chromedp.WaitVisible(chromedp.CSS("#go")))
	if status := submit(t, ctx, "#go"); status != http.StatusForbidden {
		t.Errorf("cross-site form POST answered %d, want 403", status)
	}
	var j apiJob
	srv.call(t, "GET", "/v1/jobs/"+id, nil, &j)
	if j.State != "dead" {
		t.Errorf("after a refused cross-site retry the job is %s, want still dead", j.State)
	}
}
