package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/web"
)

func TestNewNeedsStore(t *testing.T) {
	t.Parallel()
	if _, err := web.New(web.Config{}); err == nil {
		t.Error("New without a store succeeded")
	}
}

func TestPages(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	tests := []struct {
		path   string
		status int
		want   []string // in the body
	}{
		{"/", 200, []string{"<h1>Overview</h1>", `id="overview"`, `id="throughput"`, "<svg", `data-queue="emails"`,
			"rescues, last hour"}},
		{"/queues", 200, []string{`data-queue="images"`, `action="/queues/emails/pause"`, "1 retrying"}},
		{"/workers", 200, []string{`data-worker-id="w-quiet"`, `badge-suspect`, `data-worker-id="w-gone"`, "1 live"}},
		{"/orphans", 200, []string{`id="held"`, `data-job-id="` + s.held.ID + `"`, `id="rescues"`,
			`data-job-id="` + s.rescued.ID + `"`, "w-gone", ">1 min<", "node-1"}},
		{"/retries", 200, []string{`data-job-id="` + s.retrying.ID + `"`, "smtp: 451 try again later",
			`action="/jobs/` + s.retrying.ID + `/run"`}},
		{"/dead", 200, []string{`data-job-id="` + s.dead.ID + `"`, "failed_permanently", `form="dead-bulk"`,
			`action="/jobs/` + s.dead.ID + `/retry"`, `action="/dead/retry"`}},
		{"/jobs", 200, []string{`data-job-id="` + s.available.ID + `"`, `data-job-id="` + s.succeeded.ID + `"`}},
		{"/jobs?queue=reports", 200, []string{`data-job-id="` + s.available.ID + `"`}},
		{"/jobs?q=" + s.dead.ID[:30], 200, []string{`data-job-id="` + s.dead.ID + `"`}},
		{"/jobs/" + s.dead.ID, 200, []string{"template missing: welcome", "Attempts", `action="/jobs/` + s.dead.ID + `/retry"`}},
		{"/jobs/" + s.rescued.ID, 200, []string{"orphaned", "rescued by", "node-1"}},
		{"/jobs/" + s.available.ID, 200, []string{"none", "Not leased yet", ">4bf92f3577b34da6a3ce929d0e0e4736<"}},
		{"/jobs/0193f1c2-0000-7000-8000-000000000000", 404, []string{"Not found"}},
		{"/nope", 404, []string{"Nothing lives at"}},
	}
	for _, tt := range tests {
		status, body := e.get(tt.path)
		if status != tt.status {
			t.Errorf("GET %s = %d, want %d", tt.path, status, tt.status)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: body lacks %q", tt.path, w)
			}
		}
	}
}

func TestPagesWithoutRows(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, path := range []string{"/", "/queues", "/jobs"} {
		if _, body := e.get(path); !strings.Contains(body, "curl -X POST http://example.com/v1/jobs") {
			t.Errorf("GET %s on an empty store: no curl line to enqueue", path)
		}
	}
	for path, want := range map[string]string{
		"/workers": "No workers yet", "/orphans": "No job is held by a silent worker",
		"/retries": "No job is waiting to retry", "/dead": "No dead jobs",
	} {
		if _, body := e.get(path); !strings.Contains(body, want) {
			t.Errorf("GET %s on an empty store lacks %q", path, want)
		}
	}
}

func TestWithoutInsights(t *testing.T) {
	t.Parallel()
	e := setup(t, withoutInsights)
	s := e.scene()
	for _, path := range []string{"/orphans", "/retries", "/dead"} {
		status, body := e.get(path)
		if status != 200 || !strings.Contains(body, "not available on this backend") {
			t.Errorf("GET %s without Insights = %d, want 200 saying the list is not available", path, status)
		}
	}
	// Pages that the Store alone serves still work.
	for path, want := range map[string]string{
		"/queues":             `data-queue="emails"`,
		"/workers":            `data-worker-id="w-1"`,
		"/jobs?queue=reports": `data-job-id="` + s.available.ID + `"`,
		"/jobs/" + s.dead.ID:  "template missing",
		"/":                   `id="overview"`,
	} {
		if status, body := e.get(path); status != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s without Insights = %d, lacking %q", path, status, want)
		}
	}
}

// A fragment is one panel alone, for the script to swap in.
func TestFragments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	status, body := e.get("/orphans?fragment=held")
	if status != 200 || !strings.HasPrefix(body, `<section class="panel" id="held"`) || strings.Contains(body, "<html") {
		t.Errorf("fragment held = %d %.80q…, want the held section alone", status, body)
	}
	if !strings.Contains(body, `data-job-id="`+s.held.ID+`"`) {
		t.Error("fragment held lacks the held job")
	}
	// Forms inside a fragment return to the page, not to the fragment.
	_, body = e.get("/dead?queue=emails&fragment=dead")
	if !strings.Contains(body, `name="back" value="/dead?queue=emails"`) {
		t.Error("fragment dead: forms do not return to /dead?queue=emails")
	}
	if status, _ := e.get("/orphans?fragment=nope"); status != 404 {
		t.Errorf("unknown fragment = %d, want 404", status)
	}
	if status, _ := e.get("/jobs/0193f1c2-0000-7000-8000-000000000000?fragment=job"); status != 404 {
		t.Errorf("fragment of a missing job = %d, want 404", status)
	}
}

func TestStatic(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, page := e.get("/")
	for _, asset := range []string{"dashboard.css", "dashboard.js", "favicon.svg"} {
		i := strings.Index(page, "/static/"+asset+"?v=")
		if i < 0 {
			t.Errorf("page does not link %s with a version", asset)
			continue
		}
		link := page[i : i+strings.IndexByte(page[i:], '"')]
		status, body := e.get(link)
		if status != 200 || len(body) < 100 {
			t.Errorf("GET %s = %d (%d bytes)", link, status, len(body))
		}
	}
	if status, _ := e.get("/static/"); status != 404 {
		t.Errorf("GET /static/ = %d, want 404 (no listing)", status)
	}
}

func TestJobSearchPaging(t *testing.T) {
	t.Parallel()
	e := setup(t)
	specs := make([]store.JobSpec, 90)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Queue: "q"}
	}
	e.enqueue(specs...)
	_, body := e.get("/jobs?queue=q")
	i := strings.Index(body, `rel="next"`)
	if i < 0 {
		t.Fatal("90 jobs: no next page link")
	}
	start := strings.LastIndex(body[:i], `href="`) + len(`href="`)
	next := strings.ReplaceAll(body[start:start+strings.IndexByte(body[start:], '"')], "&amp;", "&")
	u, err := url.Parse(next)
	if err != nil || u.Query().Get("queue") != "q" || u.Query().Get("cursor") == "" {
		t.Fatalf("next page link %q", next)
	}
	if status, body := e.get(next); status != 200 || strings.Count(body, "data-job-id=") != 40 {
		t.Errorf("page 2 = %d with %d rows, want the 40 left", status, strings.Count(body, "data-job-id="))
	}
}

// TestNoFraming: every dashboard answer forbids framing by another page
// (clickjacking): pages, fragments, errors, refusals, static assets, the
// login and its redirects.
func TestNoFraming(t *testing.T) {
	t.Parallel()
	e := setup(t)
	cfg, _ := sessionSetup("adm")
	login, logout := web.LoginHandler(cfg), web.LogoutHandler(cfg)
	guarded := web.RequireSession(cfg)(e.handler)
	for _, tt := range []struct {
		name   string
		h      http.Handler
		method string
		path   string
		body   string
		header []string
	}{
		{"page", e.handler, "GET", "/", "", nil},
		{"fragment", e.handler, "GET", "/queues?fragment=queues", "", nil},
		{"not found", e.handler, "GET", "/no-such-page", "", nil},
		{"static", e.handler, "GET", "/static/dashboard.css", "", nil},
		{"cross-origin refusal", e.handler, "POST", "/queues/q/pause", "", []string{"Sec-Fetch-Site", "cross-site"}},
		{"action", e.handler, "POST", "/queues/q/pause", "", []string{"Sec-Fetch-Site", "same-origin"}},
		{"login page", login, "GET", "/login", "", nil},
		{"refused login", login, "POST", "/login", "token=nope", nil},
		{"logout", logout, "POST", "/logout", "", nil},
		{"redirect to login", guarded, "GET", "/queues", "", nil},
	} {
		rec := serve(tt.h, tt.method, tt.path, tt.body, tt.header...)
		if rec.Header().Get("X-Frame-Options") != "DENY" || rec.Header().Get("Content-Security-Policy") != "frame-ancestors 'none'" {
			t.Errorf("%s (%d): X-Frame-Options %q, Content-Security-Policy %q", tt.name, rec.Code,
				rec.Header().Get("X-Frame-Options"), rec.Header().Get("Content-Security-Policy"))
		}
	}
}

// TestErrorPagesNameNoNode: the 404 page and the cross-origin refusal,
// which strangers see most, name neither the node nor the version; the
// pages behind them do.
func TestErrorPagesNameNoNode(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, rec := range []*httptest.ResponseRecorder{
		serve(e.handler, "GET", "/no-such-page", ""),
		serve(e.handler, "GET", "/static/no-such-asset.css", ""),
		serve(e.handler, "POST", "/queues/q/pause", "", "Sec-Fetch-Site", "cross-site"),
	} {
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusForbidden {
			t.Errorf("status %d", rec.Code)
		}
		if body := rec.Body.String(); strings.Contains(body, "node-1") || strings.Contains(body, "v-test") {
			t.Errorf("a %d page names the node or version:\n%s", rec.Code, body)
		}
	}
	if _, body := e.get("/"); !strings.Contains(body, "node-1") || !strings.Contains(body, "v-test") {
		t.Error("the overview no longer names the node and version")
	}
}
