package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

func TestEnqueueWireFormat(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do("POST", "/v1/jobs", `{"kind":"send_email"}`).want(http.StatusCreated)
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	got := res.object()
	want := map[string]any{
		"queue": "default", "kind": "send_email", "payload": nil, "priority": 0.0,
		"state": "available", "attempt": 0.0, "max_attempts": 20.0, "timeout_ms": 1800000.0,
		"backoff": map[string]any{"base_ms": 1000.0, "max_ms": 3600000.0},
		"run_at":  ms(t0), "created_at": ms(t0), "started_at": nil, "finished_at": nil,
		"unique_key": nil, "tags": []any{}, "metadata": map[string]any{},
		"last_error": nil, "result": nil, "progress": nil, "cancel_requested": false,
		"rescues": 0.0, "dead_reason": nil, "lease": nil, "trace": nil, "concurrency_key": nil,
		"schedule": nil, "scheduled_for": nil,
	}
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if id, _ := got["id"].(string); id == "" {
		t.Errorf("no id: %v", got)
	}
	if len(got) != len(want)+1 {
		t.Errorf("fields %d, want %d: %v", len(got), len(want)+1, got)
	}
}

func TestEnqueueAllFields(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := `{"kind":"k","queue":"q.1:a-b_c","payload":{"to":"a@b"},"priority":-1000,
		"run_at":"2031-05-06T07:08:09.123456+02:00","max_attempts":1000,"timeout_ms":86400000,
		"backoff":{"base_ms":1,"max_ms":604800000},"unique_key":"u1","tags":["a","b"],
		"metadata":{"m":1}}`
	got := e.do("POST", "/v1/jobs", body).want(http.StatusCreated).object()
	checks := map[string]string{
		"queue": "q.1:a-b_c", "priority": "-1000", "state": "scheduled",
		"run_at": "2031-05-06T05:08:09.123Z", "max_attempts": "1000", "timeout_ms": "8.64e+07",
		"unique_key": "u1", "tags": "[a b]", "metadata": "map[m:1]", "payload": "map[to:a@b]",
		"backoff": "map[base_ms:1 max_ms:6.048e+08]",
	}
	for k, v := range checks {
		if fmt.Sprint(got[k]) != v {
			t.Errorf("%s = %v, want %s", k, got[k], v)
		}
	}
}

func TestEnqueueDelayAndDueScheduledReadsAvailable(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.do("POST", "/v1/jobs", `{"kind":"k","delay_ms":60000}`).want(http.StatusCreated).job()
	if j.State != "scheduled" || j.RunAt != ms(t0.Add(time.Minute)) {
		t.Fatalf("state %s run_at %s", j.State, j.RunAt)
	}
	e.clock.Advance(time.Minute)
	if got := e.do("GET", "/v1/jobs/"+j.ID, nil).want(http.StatusOK).job(); got.State != "available" {
		t.Errorf("due job reads %s, want available", got.State)
	}
}

func TestEnqueueUniqueKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := `{"kind":"k","unique_key":"once"}`
	first := e.do("POST", "/v1/jobs", body).want(http.StatusCreated).job()
	again := e.do("POST", "/v1/jobs", body).want(http.StatusOK).job()
	if again.ID != first.ID {
		t.Errorf("unique_key match gave %s, want %s", again.ID, first.ID)
	}
	other := e.do("POST", "/v1/jobs", `{"kind":"k","unique_key":"once","queue":"other"}`).want(http.StatusCreated).job()
	if other.ID == first.ID {
		t.Error("unique_key matched across queues")
	}
}

func TestEnqueueIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first := e.do("POST", "/v1/jobs", `{"kind":"k","priority":5}`, "Idempotency-Key", "key-1").
		want(http.StatusCreated).job()
	// Same body in another layout: a replay.
	again := e.do("POST", "/v1/jobs", "{ \"priority\": 5,\n \"kind\": \"k\" }", "Idempotency-Key", "key-1").
		want(http.StatusOK).job()
	if again.ID != first.ID {
		t.Errorf("replay gave %s, want %s", again.ID, first.ID)
	}
	p := e.do("POST", "/v1/jobs", `{"kind":"k","priority":6}`, "Idempotency-Key", "key-1").
		problem(http.StatusUnprocessableEntity, "idempotency_key_reused")
	if p["detail"] == "" {
		t.Error("no detail")
	}
	e.do("POST", "/v1/jobs", `{"kind":"k"}`, "Idempotency-Key", strings.Repeat("k", 256)).field("Idempotency-Key")
}

func TestEnqueueInvalid(t *testing.T) {
	t.Parallel()
	e := setup(t)
	long := func(n int) string { return strings.Repeat("a", n) }
	tags := make([]string, 33)
	for i := range tags {
		tags[i] = "t"
	}
	tests := []struct {
		body  string // request body
		field string // the field the 400 names
	}{
		{`{}`, "kind"},
		{``, "kind"},
		{`{"kind":""}`, "kind"},
		{`{"kind":"a b"}`, "kind"},
		{`{"kind":"` + long(129) + `"}`, "kind"},
		{`{"kind":7}`, "kind"},
		{`{"kind":"k","queue":"no/slash"}`, "queue"},
		{`{"kind":"k","priority":1001}`, "priority"},
		{`{"kind":"k","priority":-1001}`, "priority"},
		{`{"kind":"k","priority":1.5}`, "priority"},
		{`{"kind":"k","priority":"high"}`, "priority"},
		{`{"kind":"k","max_attempts":0}`, "max_attempts"},
		{`{"kind":"k","max_attempts":1001}`, "max_attempts"},
		{`{"kind":"k","timeout_ms":0}`, "timeout_ms"},
		{`{"kind":"k","timeout_ms":86400001}`, "timeout_ms"},
		{`{"kind":"k","delay_ms":-1}`, "delay_ms"},
		{`{"kind":"k","delay_ms":31536000001}`, "delay_ms"},
		{`{"kind":"k","run_at":"tomorrow"}`, "run_at"},
		{`{"kind":"k","run_at":"2030-01-01T00:00:00Z","delay_ms":5}`, "delay_ms"},
		{`{"kind":"k","backoff":{"base_ms":0,"max_ms":5}}`, "backoff.base_ms"},
		{`{"kind":"k","backoff":{"base_ms":1,"max_ms":604800001}}`, "backoff.max_ms"},
		{`{"kind":"k","backoff":{"base_ms":10,"max_ms":5}}`, "backoff.base_ms"},
		{`{"kind":"k","backoff":{"base":10}}`, "backoff.base"},
		{`{"kind":"k","backoff":{"base_ms":"x"}}`, "backoff.base_ms"},
		{`{"kind":"k","backoff":5}`, "backoff"},
		{`{"kind":"k","unique_key":""}`, "unique_key"},
		{`{"kind":"k","unique_key":"` + long(256) + `"}`, "unique_key"},
		{`{"kind":"k","tags":["` + strings.Join(tags, `","`) + `"]}`, "tags"},
		{`{"kind":"k","tags":["ok",""]}`, "tags[1]"},
		{`{"kind":"k","tags":["` + long(65) + `"]}`, "tags[0]"},
		{`{"kind":"k","tags":[1]}`, "tags"},
		{`{"kind":"k","metadata":[1]}`, "metadata"},
		{`{"kind":"k","metadata":"x"}`, "metadata"},
		{`{"kind":"k","colour":"red"}`, "colour"},
		{`{"kind":"k"} {}`, ""},
		{`{"kind":"k"`, ""},
		{`{"kind":"k",}`, ""},
		{`[{"kind":"k"}]`, ""},
		{`null`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			e := *e
			e.t = t
			e.do("POST", "/v1/jobs", tt.body).field(tt.field)
		})
	}
}

func TestEnqueueContentType(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.do("POST", "/v1/jobs", `{"kind":"k"}`, "Content-Type", "").want(http.StatusCreated)
	e.do("POST", "/v1/jobs", `{"kind":"k"}`, "Content-Type", "application/json; charset=utf-8").want(http.StatusCreated)
	e.do("POST", "/v1/jobs", `{"kind":"k"}`, "Content-Type", "text/plain").field("Content-Type")
}

func TestEnqueueBatch(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first := e.do("POST", "/v1/jobs", `{"kind":"k","unique_key":"u"}`).want(http.StatusCreated).job()
	var out struct{ Jobs []job }
	e.do("POST", "/v1/jobs/batch", `{"jobs":[{"kind":"a"},{"kind":"b","unique_key":"u"},{"kind":"c","queue":"q"}]}`).
		want(http.StatusCreated).into(&out)
	var kinds []string
	for _, j := range out.Jobs {
		kinds = append(kinds, j.Kind)
	}
	if !slices.Equal(kinds, []string{"a", "k", "c"}) || out.Jobs[1].ID != first.ID {
		t.Errorf("batch answered %v", out.Jobs)
	}
}

func TestEnqueueBatchInvalid(t *testing.T) {
	t.Parallel()
	e := setup(t)
	many := strings.Repeat(`{"kind":"k"},`, 1000) + `{"kind":"k"}`
	tests := []struct {
		body  string // request body
		field string // the field the 400 names
	}{
		{`{"jobs":[]}`, "jobs"},
		{`{}`, "jobs"},
		{`{"jobs":[` + many + `]}`, "jobs"},
		{`{"jobs":[{"kind":"k"},{"kind":"k"},{"kind":"k"},{"kind":"k","priority":5000}]}`, "jobs[3].priority"},
		{`{"jobs":[{"kind":"k"},{"kind":"k","priority":"x"}]}`, "jobs[1].priority"},
		{`{"jobs":[{"kind":"k"},{"kind":"k","nope":1}]}`, "jobs[1].nope"},
		{`{"jobs":[{"kind":"k"},{"kind":"k","backoff":{"nope":1}}]}`, "jobs[1].backoff.nope"},
		{`{"jobs":[{"kind":"k"},null]}`, "jobs[1]"},
		{`{"jobs":[{"queue":"q"}]}`, "jobs[0].kind"},
		{`{"jobs":{}}`, "jobs"},
		{`{"jobs":[],"extra":1}`, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			e := *e
			e.t = t
			e.do("POST", "/v1/jobs/batch", tt.body).field(tt.field)
		})
	}
}

func TestGetJob(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("default", "k")
	l := e.lease("w1", "default")
	e.do("POST", "/v1/jobs/"+j.ID+"/fail", map[string]any{"token": l.Lease.Token, "error": "boom", "retry_in_ms": 0}).
		want(http.StatusOK)
	got := e.do("GET", "/v1/jobs/"+j.ID, nil).want(http.StatusOK).job()
	if len(got.Attempts) != 1 || got.Attempts[0].Outcome != "failed" || got.Attempts[0].WorkerID != "w1" {
		t.Errorf("attempts %+v", got.Attempts)
	}
	fresh := e.enqueue("default", "k2")
	if raw := e.do("GET", "/v1/jobs/"+fresh.ID, nil).want(http.StatusOK).object(); fmt.Sprint(raw["attempts"]) != "[]" {
		t.Errorf("attempts of a fresh job: %v", raw["attempts"])
	}
	p := e.do("GET", "/v1/jobs/0193f1c2-0000-7000-8000-000000000000", nil).problem(http.StatusNotFound, "not_found")
	if p["job_id"] != "0193f1c2-0000-7000-8000-000000000000" {
		t.Errorf("job_id %v", p["job_id"])
	}
	e.do("GET", "/v1/jobs/not-an-id", nil).problem(http.StatusNotFound, "not_found")
}

func TestListJobs(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var ids []string
	for i := range 5 {
		q := "a"
		if i%2 == 1 {
			q = "b"
		}
		ids = append(ids, e.enqueue(q, fmt.Sprintf("k%d", i)).ID)
	}
	var page struct {
		Jobs       []job
		NextCursor *string `json:"next_cursor"`
	}
	e.do("GET", "/v1/jobs?limit=2", nil).want(http.StatusOK).into(&page)
	if len(page.Jobs) != 2 || page.Jobs[0].ID != ids[4] || page.Jobs[1].ID != ids[3] || page.NextCursor == nil {
		t.Fatalf("first page %+v", page)
	}
	e.do("GET", "/v1/jobs?limit=2&cursor="+*page.NextCursor, nil).want(http.StatusOK).into(&page)
	if len(page.Jobs) != 2 || page.Jobs[0].ID != ids[2] {
		t.Fatalf("second page %+v", page)
	}
	e.do("GET", "/v1/jobs?limit=2&cursor="+*page.NextCursor, nil).want(http.StatusOK).into(&page)
	if len(page.Jobs) != 1 || page.NextCursor != nil {
		t.Fatalf("last page %+v", page)
	}
	e.do("GET", "/v1/jobs?queue=b&state=available&kind=k3", nil).want(http.StatusOK).into(&page)
	if len(page.Jobs) != 1 || page.Jobs[0].ID != ids[3] {
		t.Errorf("filtered %+v", page)
	}
	e.do("GET", "/v1/jobs?state=running", nil).want(http.StatusOK).into(&page)
	if len(page.Jobs) != 0 || page.NextCursor != nil {
		t.Errorf("running %+v", page)
	}
	for query, field := range map[string]string{
		"state=bogus": "state", "limit=0": "limit", "limit=1001": "limit", "limit=x": "limit",
		"queue=a%20b": "queue", "kind=%2F": "kind",
	} {
		e.do("GET", "/v1/jobs?"+query, nil).field(field)
	}
}

func TestCancelRetryRunDelete(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("default", "k")
	if got := e.do("POST", "/v1/jobs/"+j.ID+"/cancel", nil).want(http.StatusOK).job(); got.State != "cancelled" {
		t.Errorf("cancel: %s", got.State)
	}
	p := e.do("POST", "/v1/jobs/"+j.ID+"/cancel", nil).problem(http.StatusConflict, "invalid_state")
	if p["job_id"] != j.ID {
		t.Errorf("job_id %v", p["job_id"])
	}
	e.do("POST", "/v1/jobs/"+j.ID+"/run", nil).problem(http.StatusConflict, "invalid_state")
	got := e.do("POST", "/v1/jobs/"+j.ID+"/retry", `{"payload":{"v":2}}`).want(http.StatusOK).job()
	if got.State != "available" || string(got.Payload) != `{"v":2}` {
		t.Errorf("retry: %s %s", got.State, got.Payload)
	}
	e.do("POST", "/v1/jobs/"+j.ID+"/retry", nil).problem(http.StatusConflict, "invalid_state")
	e.do("POST", "/v1/jobs/"+j.ID+"/retry", `{"payload":1,"x":2}`).field("x")

	s := e.do("POST", "/v1/jobs", `{"kind":"k","delay_ms":3600000}`).want(http.StatusCreated).job()
	if got := e.do("POST", "/v1/jobs/"+s.ID+"/run", nil).want(http.StatusOK).job(); got.State != "available" {
		t.Errorf("run: %s", got.State)
	}

	e.enqueue("r", "k")
	r := e.lease("w", "r")
	if got := e.do("POST", "/v1/jobs/"+r.ID+"/cancel", nil).want(http.StatusOK).job(); got.State != "running" || !got.CancelRequested {
		t.Errorf("cancel running: %s %v", got.State, got.CancelRequested)
	}
	e.do("DELETE", "/v1/jobs/"+r.ID, nil).problem(http.StatusConflict, "invalid_state")
	e.do("DELETE", "/v1/jobs/"+s.ID, nil).want(http.StatusNoContent)
	e.do("DELETE", "/v1/jobs/"+s.ID, nil).problem(http.StatusNotFound, "not_found")
	for _, action := range []string{"cancel", "retry", "run"} {
		e.do("POST", "/v1/jobs/missing/"+action, nil).problem(http.StatusNotFound, "not_found")
	}
}

// TestIdempotentReplayOfPrunedJob: the key outlives its job, and a replay
// answers with the id alone.
func TestIdempotentReplayOfPrunedJob(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.do("POST", "/v1/jobs", `{"kind":"k","queue":"q"}`, "Idempotency-Key", "k1").want(http.StatusCreated).job()
	tok := e.lease("w", "q").Lease.Token
	e.do("POST", "/v1/jobs/"+j.ID+"/ack", map[string]any{"token": tok}).want(http.StatusOK)
	e.clock.Advance(time.Hour)
	_, err := e.store.JobPrune(t.Context(), &store.JobPruneParams{
		SucceededBefore: e.clock.Now(), DeadBefore: e.clock.Now(), Limit: 100, Now: e.clock.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/v1/jobs/"+j.ID, nil).want(http.StatusNotFound)
	got := e.do("POST", "/v1/jobs", `{"kind":"k","queue":"q"}`, "Idempotency-Key", "k1").want(http.StatusOK).object()
	if len(got) != 1 || got["id"] != j.ID {
		t.Errorf("replay of a pruned job: %v", got)
	}
}
