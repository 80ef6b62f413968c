package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tetherq/tether/store"
)

// follow reads the flash an action set, as the next page shows it.
func (e *env) follow(rec interface{ Result() *http.Response }) (string, string) {
	e.t.Helper()
	res := rec.Result()
	loc := res.Header.Get("Location")
	req := httpGet(loc)
	for _, c := range res.Cookies() {
		req.AddCookie(c)
	}
	out := recorder()
	e.handler.ServeHTTP(out, req)
	return loc, out.Body.String()
}

func TestActions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	tests := []struct {
		name  string
		path  string
		back  string
		where string // the redirect
		flash string
		check func() bool
	}{
		{"pause", "/queues/emails/pause", "/queues", "/queues", "Paused queue emails.", func() bool {
			return e.queue("emails").Paused
		}},
		{"resume", "/queues/emails/resume", "/", "/", "Resumed queue emails.", func() bool {
			return !e.queue("emails").Paused
		}},
		{"run", "/jobs/" + s.retrying.ID + "/run", "/retries", "/retries", "is available now", func() bool {
			return e.job(s.retrying.ID).State == store.StateAvailable
		}},
		{"retry", "/jobs/" + s.dead.ID + "/retry", "/dead?queue=emails", "/dead?queue=emails", "is back in queue emails", func() bool {
			return e.job(s.dead.ID).State == store.StateAvailable
		}},
		{"cancel waiting", "/jobs/" + s.available.ID + "/cancel", "", "/jobs/" + s.available.ID, "is cancelled", func() bool {
			return e.job(s.available.ID).State == store.StateCancelled
		}},
		{"cancel running", "/jobs/" + s.running.ID + "/cancel", "/jobs", "/jobs", "Cancellation of job", func() bool {
			return e.job(s.running.ID).CancelRequested
		}},
		{"delete", "/jobs/" + s.available.ID + "/delete", "/jobs/" + s.available.ID, "/jobs", "Deleted job", func() bool {
			_, err := e.store.JobGet(e.t.Context(), &store.JobGetParams{ID: s.available.ID})
			return err != nil
		}},
		{"delete running", "/jobs/" + s.running.ID + "/delete", "/jobs", "/jobs", "Nothing done", func() bool {
			return e.job(s.running.ID).State == store.StateRunning
		}},
		{"retry gone", "/jobs/" + s.available.ID + "/retry", "/dead", "/dead", "does not exist", func() bool { return true }},
		{"foreign back", "/queues/emails/pause", "https://evil.example/", "/queues", "Paused", func() bool { return true }},
		{"scheme-relative back", "/queues/emails/resume", "//evil.example/x", "/queues", "Resumed", func() bool { return true }},
	}
	for _, tt := range tests {
		form := url.Values{"back": {tt.back}}
		if strings.HasSuffix(tt.path, "/delete") {
			form.Set("confirm", "yes") // the confirmation's own POST; see TestDeleteAsksFirst
		}
		rec := e.post(tt.path, form)
		if rec.Code != http.StatusSeeOther {
			t.Errorf("%s: POST %s = %d, want 303", tt.name, tt.path, rec.Code)
			continue
		}
		loc, page := e.follow(rec)
		if loc != tt.where {
			t.Errorf("%s: redirected to %q, want %q", tt.name, loc, tt.where)
		}
		if !strings.Contains(page, tt.flash) || !strings.Contains(page, `class="flash`) {
			t.Errorf("%s: the next page lacks the flash %q", tt.name, tt.flash)
		}
		if !tt.check() {
			t.Errorf("%s: the store did not change as asked", tt.name)
		}
	}
	// The flash shows once.
	if _, body := e.get("/queues"); strings.Contains(body, `class="flash`) {
		t.Error("a page without the cookie shows a flash")
	}
}

func (e *env) queue(name string) *store.Queue {
	e.t.Helper()
	qs, err := e.store.QueueList(e.t.Context(), &store.QueueListParams{Now: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, q := range qs {
		if q.Name == name {
			return q
		}
	}
	e.t.Fatalf("no queue %q", name)
	return nil
}

// A POST from another site is refused before any handler runs.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Sec-Fetch-Site", "", "Origin", "https://evil.example"},
	} {
		for _, path := range []string{"/jobs/" + s.dead.ID + "/retry", "/queues/emails/pause", "/dead/retry",
			"/jobs/bulk", "/retries/retry", "/jobs/" + s.dead.ID + "/delete"} {
			rec := e.post(path, url.Values{"all": {"1"}, "action": {"retry"}, "confirm": {"yes"}}, h...)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "nothing was changed") {
				t.Errorf("POST %s with %q = %d, want 403", path, h, rec.Code)
			}
		}
	}
	if e.job(s.dead.ID).State != store.StateDead || e.queue("emails").Paused {
		t.Error("a refused cross-site POST changed the store")
	}
	// The same request from the dashboard itself goes through.
	if rec := e.post("/jobs/"+s.dead.ID+"/retry", nil, "Origin", "http://example.com"); rec.Code != http.StatusSeeOther {
		t.Errorf("same-origin POST = %d, want 303", rec.Code)
	}
}

func TestActionMethods(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if status, _ := e.get("/queues/emails/pause"); status != http.StatusMethodNotAllowed {
		t.Errorf("GET of an action = %d, want 405", status)
	}
}
