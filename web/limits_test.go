package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The limits form on /queues sets a queue's limits with the same store
// call as the API, the table shows them and the leases they held back,
// and all fields empty clears them.
func TestLimitsForm(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.enqueue(store.JobSpec{Kind: "k", Queue: "emails"}, store.JobSpec{Kind: "k", Queue: "emails"})
	rec := e.post("/queues/emails/limits", url.Values{"back": {"/queues"}, "concurrency": {"1"},
		"rate_limit": {"5"}, "rate_period_ms": {"1000"}, "rate_burst": {"2"}, "key_concurrency": {""}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("POST = %d, want 303", rec.Code)
	}
	if _, page := e.follow(rec); !strings.Contains(page, "Limits of queue emails saved.") {
		t.Error("the next page lacks the flash")
	}
	l := e.queue("emails").Limits
	if l == nil || l.Concurrency == nil || *l.Concurrency != 1 || l.Rate == nil ||
		*l.Rate != (store.Rate{Limit: 5, Period: time.Second, Burst: 2}) || l.KeyConcurrency != nil || l.KeyRate != nil {
		t.Fatalf("limits set: %+v", l)
	}
	if n := len(e.lease("w", "emails", 10)); n != 1 {
		t.Fatalf("leased %d under a cap of 1", n)
	}
	_, body := e.get("/queues")
	for _, want := range []string{"≤ 1 running", "5 per 1 s (+2)", "held back: concurrency 1", `name="concurrency" min="1" max="100000" value="1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/queues lacks %q", want)
		}
	}

	_, body = e.get("/queues/emails")
	for _, want := range []string{"≤ 1 running", "held back: concurrency 1", `action="/queues/emails/limits"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/queues/emails lacks %q", want)
		}
	}

	rec = e.post("/queues/emails/limits", url.Values{"back": {"/queues"}})
	if _, page := e.follow(rec); !strings.Contains(page, "Queue emails has no limits now.") {
		t.Error("clearing: the next page lacks the flash")
	}
	if l := e.queue("emails").Limits; l != nil {
		t.Errorf("cleared limits read %+v", l)
	}
}

// A bad field is a 400 naming it, and changes nothing.
func TestLimitsFormRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.enqueue(store.JobSpec{Kind: "k", Queue: "emails"})
	e.post("/queues/emails/limits", url.Values{"concurrency": {"2"}})
	for _, form := range []url.Values{
		{"concurrency": {"0"}},
		{"concurrency": {"x"}},
		{"key_concurrency": {"100001"}},
		{"rate_limit": {"5"}},
		{"rate_period_ms": {"1000"}},
		{"key_rate_limit": {"1"}, "key_rate_period_ms": {"1"}, "key_rate_burst": {"-1"}},
	} {
		rec := e.post("/queues/emails/limits", form)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%v: %d, want 400", form, rec.Code)
		}
	}
	if rec := e.post("/queues/bad%20name/limits", url.Values{"concurrency": {"1"}}); rec.Code != http.StatusBadRequest {
		t.Errorf("a bad queue name: %d, want 400", rec.Code)
	}
	if l := e.queue("emails").Limits; l == nil || *l.Concurrency != 2 || l.Rate != nil || l.KeyRate != nil {
		t.Errorf("limits after refused forms: %+v, want concurrency 2 only", l)
	}
}
