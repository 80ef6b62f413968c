package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tetherq/tether/store"
)

// /queues/{name} shows one queue: its counts (retrying apart), its pause
// button returning to it, the place of its limits, and its newest jobs.
func TestQueuePage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	status, body := e.get("/queues/emails")
	if status != 200 {
		t.Fatalf("GET /queues/emails = %d", status)
	}
	for _, w := range []string{"<h1>Queue</h1>", "<h2>emails</h2>", `href="/queues" aria-current="page"`,
		`href="/jobs?queue=emails&amp;state=dead"`, `href="/retries?queue=emails"`, "retrying",
		`action="/queues/emails/pause"`, `name="back" value="/queues/emails"`, "data-limits",
		`data-job-id="` + s.retrying.ID + `"`, `data-job-id="` + s.dead.ID + `"`, "The newest 2 of 2.",
		`href="/jobs?queue=emails"`} {
		if !strings.Contains(body, w) {
			t.Errorf("/queues/emails lacks %q", w)
		}
	}
	if strings.Contains(body, `data-job-id="`+s.running.ID+`"`) {
		t.Error("/queues/emails lists a job of images")
	}
	// Pausing from the page comes back to it.
	rec := e.post("/queues/emails/pause", url.Values{"back": {"/queues/emails"}})
	if rec.Code != 303 || rec.Header().Get("Location") != "/queues/emails" {
		t.Errorf("pause from the queue page = %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	if _, body := e.get("/queues/emails"); !strings.Contains(body, `action="/queues/emails/resume"`) {
		t.Error("a paused queue's page offers no resume")
	}
	// The queue list links each queue to its page.
	if _, body := e.get("/queues"); !strings.Contains(body, `href="/queues/images"`) {
		t.Error("/queues does not link to /queues/images")
	}
	// Its panels alone, as the page's script fetches them.
	for _, id := range []string{"queue", "queue-jobs"} {
		if status, body := e.get("/queues/emails?fragment=" + id); status != 200 || !strings.HasPrefix(body, `<section class="panel" id="`+id+`"`) {
			t.Errorf("fragment %s = %d %.60q", id, status, body)
		}
	}
}

// A queue no job names and none paused is 404; a name no queue can have is
// 400; a paused queue without jobs has its page.
func TestQueuePageUnknown(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.scene()
	for path, want := range map[string]int{
		"/queues/nope":                        404,
		"/queues/nope?fragment=queue":         404,
		"/queues/bad%20name":                  400,
		"/queues/" + strings.Repeat("q", 200): 400,
	} {
		if status, _ := e.get(path); status != want {
			t.Errorf("GET %s = %d, want %d", path, status, want)
		}
	}
	if _, err := e.store.QueueSetPaused(t.Context(), &store.QueueSetPausedParams{Name: "empty", Paused: true, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if status, body := e.get("/queues/empty"); status != 200 || !strings.Contains(body, "No jobs left in empty") {
		t.Errorf("GET /queues/empty (paused, no jobs) = %d", status)
	}
}
