package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
	"github.com/tetherq/tether/web"
)

// env is the dashboard over a fresh store (a SQLite file unless the test
// picks a backend), at an injected instant.
type env struct {
	t       *testing.T
	store   backendStore
	clock   *storetest.Clock
	handler http.Handler
}

type option func(*web.Config)

// withoutInsights builds the dashboard as over a backend without them.
func withoutInsights(c *web.Config) { c.Insights = nil }

func setup(t *testing.T, opts ...option) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return setupOn(t, st, opts...)
}

// setupOn is setup over st, an empty store of any backend.
func setupOn(t *testing.T, st backendStore, opts ...option) *env {
	t.Helper()
	e := &env{t: t, store: st, clock: storetest.NewClock(storetest.Base)}
	cfg := web.Config{Store: st, Insights: st, Now: e.clock.Now, NodeID: "node-1", Version: "v-test",
		HeartbeatInterval: 5 * time.Second, DeadAfter: 15 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	e.handler, err = web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// get requests path and returns the status and body.
func (e *env) get(path string) (int, string) {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

// post sends a same-origin form POST as a browser does.
func (e *env) post(path string, form url.Values, header ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

func (e *env) enqueue(specs ...store.JobSpec) []*store.Job {
	e.t.Helper()
	res, err := e.store.JobEnqueue(e.t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Jobs
}

func (e *env) lease(worker, queue string, max int) []*store.Job {
	e.t.Helper()
	jobs, err := e.store.JobLease(e.t.Context(), &store.JobLeaseParams{WorkerID: worker, Queues: []string{queue}, Max: max, Now: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return jobs
}

func (e *env) job(id string) *store.Job {
	e.t.Helper()
	j, err := e.store.JobGet(e.t.Context(), &store.JobGetParams{ID: id, Now: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

func (e *env) fail(j *store.Job, msg string, noRetry bool) *store.Job {
	e.t.Helper()
	got, err := e.store.JobFail(e.t.Context(), &store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: msg, NoRetry: noRetry, Now: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// scene fills the store with one of everything the pages show.
type scene struct {
	available, running, retrying, dead, succeeded, held, rescued *store.Job
}

func (e *env) scene() scene {
	e.t.Helper()
	var s scene
	e.enqueue(store.JobSpec{Kind: "send_email", Queue: "emails", Payload: []byte(`{"to":"ada@example.com"}`)},
		store.JobSpec{Kind: "send_email", Queue: "emails"}, store.JobSpec{Kind: "resize", Queue: "images"},
		store.JobSpec{Kind: "resize", Queue: "images"}, store.JobSpec{Kind: "resize", Queue: "images"})
	// A worker that falls silent holding a job, rescued a minute later.
	s.rescued = e.lease("w-gone", "images", 1)[0]
	e.clock.Advance(time.Minute)
	orphans, err := e.store.JobListOrphans(e.t.Context(), &store.JobListOrphansParams{DeadBefore: e.clock.Now().Add(-15 * time.Second)})
	if err != nil || len(orphans) != 1 {
		e.t.Fatalf("orphans %v, %v", orphans, err)
	}
	if _, err := e.store.JobRecover(e.t.Context(), &store.JobRecoverParams{Orphans: orphans, NodeID: "node-1", Now: e.clock.Now()}); err != nil {
		e.t.Fatal(err)
	}
	leased := e.lease("w-1", "emails", 2)
	s.retrying = e.fail(leased[0], "smtp: 451 try again later", false)
	s.dead = e.fail(leased[1], "template missing: welcome", true)
	done := e.lease("w-1", "images", 1)[0]
	s.succeeded, err = e.store.JobAck(e.t.Context(), &store.JobAckParams{ID: done.ID, Token: done.Lease.Token, Now: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	s.held = e.lease("w-quiet", "images", 1)[0]
	e.clock.Advance(12 * time.Second) // w-quiet is suspect now
	s.running = e.lease("w-1", "images", 1)[0]
	s.available = e.enqueue(store.JobSpec{Kind: "report", Queue: "reports",
		Trace: &store.Trace{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})[0]
	return s
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func httpGet(path string) *http.Request { return httptest.NewRequest("GET", path, nil) }

func recorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
