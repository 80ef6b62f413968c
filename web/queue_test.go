package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

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

// The queue page charts the depth the scheduler sampled, over the range
// asked for; a range it does not offer is 400.
func TestQueueDepthChart(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.scene()
	if _, body := e.get("/queues/emails"); !strings.Contains(body, "No sample in this range yet") {
		t.Error("an unsampled queue's chart does not say so")
	}
	for _, d := range []store.QueueDepth{{Queue: "emails", Available: 7, Scheduled: 2}, {Queue: "images", Available: 1}} {
		if _, err := e.store.QueueDepthRoll(t.Context(), &store.QueueDepthRollParams{Depths: []store.QueueDepth{d}, Now: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string][]string{
		"/queues/emails":           {"Depth, last 1 hour", `data-chart="depth"`, "7 available, 2 scheduled", `class="bar-available"`, `class="bar-scheduled"`},
		"/queues/emails?range=24h": {"Depth, last 24 hours", "7 available, 2 scheduled", `href="/queues/emails?range=7d"`},
		"/queues/emails?range=7d":  {"Depth, last 7 days", "7 available, 2 scheduled"},
		"/queues/images":           {"1 available, 0 scheduled"},
	} {
		status, body := e.get(path)
		if status != 200 {
			t.Errorf("GET %s = %d", path, status)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", path, w)
			}
		}
		if strings.Contains(body, "No sample in this range yet") {
			t.Errorf("GET %s says no sample", path)
		}
	}
	if status, body := e.get("/queues/emails?range=2h"); status != 400 || !strings.Contains(body, "must be 1h, 24h or 7d") {
		t.Errorf("GET ?range=2h = %d, want 400 naming the ranges", status)
	}
	// Without Insights the page stands, its chart saying why it is missing.
	bare := setup(t, withoutInsights)
	bare.enqueue(store.JobSpec{Kind: "k", Queue: "reports"})
	if status, body := bare.get("/queues/reports"); status != 200 || !strings.Contains(body, "not available on this backend") {
		t.Errorf("without Insights: %d", status)
	}
}

// The queue page shows what the scheduler rolled up: throughput, and per
// kind how long jobs waited and ran.
func TestQueueFlow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	if _, body := e.get("/queues/images"); !strings.Contains(body, "No job of images finished in this range") {
		t.Error("before any roll the panel does not say nothing finished")
	}
	minute := s.succeeded.FinishedAt.Truncate(time.Minute)
	if _, err := e.store.QueueMinuteRoll(t.Context(), &store.QueueMinuteRollParams{Minute: minute, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	status, body := e.get("/queues/images")
	for _, w := range []string{"Finished, last 1 hour", `data-chart="throughput"`, `data-kind="resize"`, "1 succeeded, 0 dead",
		"Wait p50", `data-p="run50">≤ 1 ms<`} {
		if !strings.Contains(body, w) {
			t.Errorf("/queues/images lacks %q", w)
		}
	}
	if status != 200 {
		t.Errorf("GET /queues/images = %d", status)
	}
	if status, body := e.get("/queues/emails?range=7d&fragment=queue-flow"); status != 200 || !strings.Contains(body, "Finished, last 7 days") {
		t.Errorf("fragment queue-flow over 7 d = %d", status)
	}
}
