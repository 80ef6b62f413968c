package web_test

// The browser tests' machinery: the server, its seed data, Chromium and the
// chromedp helpers. The scenarios are in browser_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-chi/chi/v5"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
	"github.com/tetherq/tether/web"
)

// The short settings of the browser tests.
const (
	bDeadAfter = 2 * time.Second
	bTick      = 200 * time.Millisecond
	bHeartbeat = 250 * time.Millisecond
)

// chromium finds Debian's browser. Without it the tests skip, except on CI,
// where a missing browser is a broken machine.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	storetest.Unavailable(t, "chromium is not installed", "make tools installs it")
	return ""
}

// server is the whole HTTP surface of one process over a store, and its
// scheduler once started.
type server struct {
	url   string
	store backendStore
}

// startServer serves st until the test ends; st's own cleanup, registered
// before, closes it after the server has stopped. The scheduler waits for
// startScheduler.
func startServer(t *testing.T, st backendStore) *server {
	t.Helper()
	shutdown := make(chan struct{})
	a, err := api.New(api.Config{Store: st, NodeID: "node-a", HeartbeatInterval: bHeartbeat, DeadAfter: bDeadAfter, Shutdown: shutdown})
	if err != nil {
		t.Fatal(err)
	}
	dash, err := web.New(web.Config{Store: st, Insights: st, NodeID: "node-a", Version: "v0.0.0-test",
		HeartbeatInterval: bHeartbeat, DeadAfter: bDeadAfter, Shutdown: shutdown})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	a.Routes(r)
	r.Handle("/*", dash)
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		close(shutdown)
		srv.Close()
	})
	return &server{url: srv.URL, store: st}
}

// startScheduler runs the server's scheduler until the test ends. It
// starts after seed: a tick in the middle of it would take the seed's
// hour-old leases, not yet settled, for orphans or timeouts.
func (s *server) startScheduler(t *testing.T) {
	t.Helper()
	sched, err := scheduler.New(scheduler.Config{Store: s.store, NodeID: "node-a", Tick: bTick, DeadAfter: bDeadAfter})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = sched.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
}

// call sends a JSON request to the API and decodes the answer into out.
func (s *server) call(t *testing.T, method, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(t.Context(), method, s.url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s = %d: %s", method, path, res.StatusCode, readAll(t, res.Body))
	}
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

type apiJob struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Lease *struct {
		Token string `json:"token"`
	} `json:"lease"`
}

// seed fills the store with an hour of history as a busy queue would have
// it: throughput per minute, retries, the dead, live workers at work.
func (s *server) seed(t *testing.T) (dead []string) {
	t.Helper()
	ctx := t.Context()
	now := time.Now()
	enqueue := func(at time.Time, specs ...store.JobSpec) []*store.Job {
		res, err := s.store.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: at})
		if err != nil {
			t.Fatal(err)
		}
		return res.Jobs
	}
	lease := func(worker string, queues []string, n int, at time.Time) []*store.Job {
		jobs, err := s.store.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: queues, Max: n, Now: at})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	kinds := map[string]string{"emails": "send_email", "images": "resize_image", "reports": "build_report"}
	queues := []string{"emails", "images", "reports"}
	// A minute is one enqueue, one lease and one settle for all three
	// queues, so that the seed stays quick on the network stores too.
	for m := 55; m >= 1; m-- {
		at := now.Add(-time.Duration(m) * time.Minute)
		var specs []store.JobSpec
		for _, q := range queues {
			for i := range 4 + (m*7+len(q))%9 {
				specs = append(specs, store.JobSpec{Kind: kinds[q], Queue: q, Payload: json.RawMessage(`{"n":` + fmt.Sprint(i) + `}`)})
			}
		}
		enqueue(at, specs...)
		p := &store.JobSettleParams{Now: at.Add(20 * time.Second)}
		failed := map[string]bool{} // the queues that had their failure this minute
		for _, j := range lease("batch", queues, len(specs), at) {
			if m%6 == 0 && !failed[j.Queue] {
				failed[j.Queue] = true
				later := time.Duration(m+5) * time.Minute // still waiting to retry now
				p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token,
					Error: "upstream 503: service unavailable", RetryIn: &later})
				continue
			}
			p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
		}
		if _, err := s.store.JobSettle(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// The dead: failed for good, a minute apart.
	for i, msg := range []string{"template \"welcome\" not found", "invalid address: bob@", "image too large: 48 MB"} {
		q := []string{"emails", "emails", "images"}[i]
		j := enqueue(now.Add(-time.Duration(10-i)*time.Minute), store.JobSpec{Kind: kinds[q], Queue: q,
			Payload: json.RawMessage(`{"to":"bob@","template":"welcome"}`), Tags: []string{"signup"}})[0]
		l := lease("w-"+q, []string{q}, 1, now.Add(-time.Duration(10-i)*time.Minute))
		if _, err := s.store.JobFail(ctx, &store.JobFailParams{ID: l[0].ID, Token: l[0].Lease.Token, Error: msg, NoRetry: true,
			Now: now.Add(-time.Duration(9-i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		dead = append(dead, j.ID)
	}
	// Work waiting, and work in hand by live workers.
	enqueue(now, store.JobSpec{Kind: "build_report", Queue: "reports", RunAt: now.Add(10 * time.Minute)})
	waiting := make([]store.JobSpec, 12)
	for i := range waiting {
		waiting[i] = store.JobSpec{Kind: "send_email", Queue: "emails"}
	}
	enqueue(now, waiting...)
	for _, w := range []string{"mailer-1", "mailer-2"} {
		s.call(t, "POST", "/v1/workers", map[string]any{"id": w, "queues": []string{"emails"},
			"labels": map[string]string{"host": "10.0.0." + w[len(w)-1:], "version": "1.4.2"}}, nil)
		var leased struct{ Jobs []apiJob }
		s.call(t, "POST", "/v1/lease", map[string]any{"worker_id": w, "queues": []string{"emails"}, "max": 2}, &leased)
	}
	// They stay live, heartbeating as workers do, until the test ends.
	hctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(bHeartbeat / 2)
		defer tick.Stop()
		for {
			for _, w := range []string{"mailer-1", "mailer-2"} {
				_, _ = s.store.WorkerHeartbeat(hctx, &store.WorkerHeartbeatParams{ID: w, Now: time.Now()})
			}
			select {
			case <-hctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { stop(); <-done })
	return dead
}

// browser starts Chromium with a fresh profile and returns a tab.
func browser(t *testing.T, exe string) context.Context {
	t.Helper()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		// Both tabs of a test stay live: no throttled timers or frozen
		// renderer for the one in the background.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// shots is where screenshots go.
func shots(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TETHER_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// do runs actions with a deadline, failing the test with what it was doing.
func do(t *testing.T, ctx context.Context, what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// submit clicks a form's button and waits for the page it leads to.
func submit(t *testing.T, ctx context.Context, sel string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, chromedp.WaitVisible(chromedp.CSS(sel)), clickNow(sel))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	return res.Status
}

// clickNow clicks the element sel in one script: find and click in the
// same turn of the page's event loop. A chromedp.Click finds the node
// first and clicks it in a later call, and a live update that replaces the
// panel in between leaves it holding a node the page no longer has
// ("Could not find node with given id").
func clickNow(sel string) chromedp.Action[chromedp.Void] {
	quoted, _ := json.Marshal(sel) // a string always marshals
	js := `(function () { var b = document.querySelector(` + string(quoted) + `); if (b) b.click(); return !!b; })()`
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		clicked, err := chromedp.Evaluate[bool](js)(ctx, tg)
		if err == nil && !clicked {
			err = fmt.Errorf("no element matches %s", sel)
		}
		return chromedp.Void{}, err
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}
