package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tetherq/tether/store"
)

// badNames are outside API.md's names (1..128 of A-Z a-z 0-9 . _ : -). The
// first is an attack on Redis, where a queue's keys are <prefix>{<queue>}:…
// and a unique key's <prefix>{<queue>}:u:<key>: queue "a}:u:k:{" has the
// keys of queue a's unique key "k:{}:…".
var badNames = []string{"a}:u:k:{", "a b", "a/b", "<b>", strings.Repeat("q", 129)}

// Every name and filter the dashboard takes from a URL or a form passes the
// API's rule before it reaches the store: a bad one is answered 400 and
// nothing changes, on every backend.
func TestBadInputRefused(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := setupOn(t, b.open(t))
			testBadInputRefused(t, e)
		})
	}
}

func testBadInputRefused(t *testing.T, e *env) {
	uk := "k:{}:m" // on Redis, the key of queue "a}:u:k:{"'s settings
	held := e.enqueue(store.JobSpec{Kind: "k", Queue: "a", UniqueKey: &uk})[0]
	e.enqueue(store.JobSpec{Kind: "k", Queue: "d"})
	dead := e.fail(e.lease("w", "d", 1)[0], "no", true)
	before := e.queueNames()

	refused := func(what string, status int, body string) {
		t.Helper()
		if status != http.StatusBadRequest {
			t.Errorf("%s = %d, want 400", what, status)
		}
		if !strings.Contains(body, "must be") {
			t.Errorf("%s: the page does not say what is wrong", what)
		}
	}
	for _, name := range badNames {
		for _, action := range []string{"resume", "pause"} { // a paused queue is listed
			path := "/queues/" + url.PathEscape(name) + "/" + action
			rec := e.post(path, url.Values{"back": {"/queues"}})
			refused("POST "+path, rec.Code, rec.Body.String())
		}
		for _, field := range []string{"queue", "kind"} {
			rec := e.post("/dead/retry", url.Values{"all": {"1"}, field: {name}})
			refused("POST /dead/retry with "+field+" "+name, rec.Code, rec.Body.String())
			for _, page := range []string{"/jobs", "/dead", "/retries"} {
				if page == "/retries" && field == "kind" {
					continue // the retries page filters by queue only
				}
				for _, fragment := range []string{"", strings.TrimPrefix(page, "/")} {
					q := url.Values{field: {name}}
					if fragment != "" {
						q.Set("fragment", fragment)
					}
					path := page + "?" + q.Encode()
					status, body := e.get(path)
					refused("GET "+path, status, body)
				}
			}
		}
	}
	for _, path := range []string{"/jobs?state=bogus", "/dead?reason=bogus"} {
		status, body := e.get(path)
		refused("GET "+path, status, body)
	}
	rec := e.post("/dead/retry", url.Values{"all": {"1"}, "reason": {"bogus"}})
	refused("POST /dead/retry with reason bogus", rec.Code, rec.Body.String())

	if after := e.queueNames(); !slices.Equal(after, before) {
		t.Errorf("queues %q after the refused requests, want %q", after, before)
	}
	for _, q := range []string{"a", "d"} {
		if e.queue(q).Paused {
			t.Errorf("queue %s was paused", q)
		}
	}
	if st := e.job(dead.ID).State; st != store.StateDead {
		t.Errorf("the dead job is %s after refused retries", st)
	}
	// The unique key still holds its job: nothing was written over it.
	again := e.enqueue(store.JobSpec{Kind: "k", Queue: "a", UniqueKey: &uk})[0]
	if again.ID != held.ID {
		t.Errorf("unique key %q now yields job %s, want %s", uk, again.ID, held.ID)
	}
	// Good names still work.
	if status, _ := e.get("/dead?queue=d&kind=k&reason=failed_permanently"); status != http.StatusOK {
		t.Errorf("a good filter = %d, want 200", status)
	}
	if rec := e.post("/queues/a/pause", nil); rec.Code != http.StatusSeeOther || !e.queue("a").Paused {
		t.Errorf("pause of a good name = %d", rec.Code)
	}
}

// queueNames lists the store's queues by name.
func (e *env) queueNames() []string {
	e.t.Helper()
	qs, err := e.store.QueueList(e.t.Context(), &store.QueueListParams{Now: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, q := range qs {
		names = append(names, q.Name)
	}
	slices.Sort(names)
	return names
}
