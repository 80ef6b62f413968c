package api_test

import (
	"net/http"
	"testing"
	"time"
)

func TestAck(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("q", "k")
	l := e.lease("w", "q")
	body := map[string]any{"token": l.Lease.Token, "result": map[string]any{"sent": true}}
	got := e.do("POST", "/v1/jobs/"+j.ID+"/ack", body).want(http.StatusOK).job()
	if got.State != "succeeded" || string(got.Result) != `{"sent":true}` || got.Lease != nil {
		t.Errorf("acked job %+v", got)
	}
	// The same ack again is idempotent.
	e.do("POST", "/v1/jobs/"+j.ID+"/ack", body).want(http.StatusOK)
	e.do("POST", "/v1/jobs/missing/ack", body).problem(http.StatusNotFound, "not_found")
	e.do("POST", "/v1/jobs/"+j.ID+"/ack", `{}`).field("token")
	e.do("POST", "/v1/jobs/"+j.ID+"/ack", `{"token":""}`).field("token")
	e.do("POST", "/v1/jobs/"+j.ID+"/ack", `{"token":5}`).field("token")
}

// TestStaleTokenIsFenced: a worker whose job was released and leased again
// can neither ack, fail, extend nor release it.
func TestStaleTokenIsFenced(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("q", "k")
	stale := e.lease("w1", "q").Lease.Token
	e.do("POST", "/v1/jobs/"+j.ID+"/release", map[string]any{"token": stale}).want(http.StatusOK)
	fresh := e.lease("w2", "q").Lease.Token
	for _, action := range []string{"ack", "fail", "extend", "release"} {
		body := map[string]any{"token": stale}
		if action == "fail" {
			body["error"] = "x"
		}
		p := e.do("POST", "/v1/jobs/"+j.ID+"/"+action, body).problem(http.StatusConflict, "lease_lost")
		if p["job_id"] != j.ID {
			t.Errorf("%s: job_id %v", action, p["job_id"])
		}
	}
	e.do("POST", "/v1/jobs/"+j.ID+"/ack", map[string]any{"token": fresh}).want(http.StatusOK)
}

func TestFail(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("q", "k")
	l := e.lease("w", "q")
	got := e.do("POST", "/v1/jobs/"+j.ID+"/fail", map[string]any{"token": l.Lease.Token, "error": "boom", "retry_in_ms": 5000}).
		want(http.StatusOK).job()
	if got.State != "scheduled" || got.RunAt != ms(t0.Add(5*time.Second)) || got.LastError == nil || *got.LastError != "boom" {
		t.Errorf("retried job %+v", got)
	}
	e.clock.Advance(5 * time.Second)
	e.promote()
	l = e.lease("w", "q")
	got = e.do("POST", "/v1/jobs/"+j.ID+"/fail", map[string]any{"token": l.Lease.Token, "error": "fatal", "retry": false}).
		want(http.StatusOK).job()
	if got.State != "dead" || got.DeadReason == nil || *got.DeadReason != "failed_permanently" {
		t.Errorf("dead job %+v", got)
	}
	e.do("POST", "/v1/jobs/"+j.ID+"/fail", `{"token":"t"}`).field("error")
	e.do("POST", "/v1/jobs/"+j.ID+"/fail", `{"token":"t","error":"e","retry_in_ms":-1}`).field("retry_in_ms")
	e.do("POST", "/v1/jobs/"+j.ID+"/fail", `{"token":"t","error":"e","retry":"no"}`).field("retry")
}

func TestExtend(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("q", "k")
	tok := e.lease("w", "q").Lease.Token
	e.clock.Advance(time.Minute)
	got := e.do("POST", "/v1/jobs/"+j.ID+"/extend", map[string]any{"token": tok, "extend_ms": 120000, "progress": 40}).
		want(http.StatusOK).object()
	if got["expires_at"] != ms(t0.Add(3*time.Minute)) || got["cancel_requested"] != false {
		t.Errorf("extend: %v", got)
	}
	e.do("POST", "/v1/jobs/"+j.ID+"/cancel", nil).want(http.StatusOK)
	got = e.do("POST", "/v1/jobs/"+j.ID+"/extend", map[string]any{"token": tok}).want(http.StatusOK).object()
	if got["expires_at"] != ms(t0.Add(31*time.Minute)) || got["cancel_requested"] != true {
		t.Errorf("extend by timeout after cancel: %v", got)
	}
	if p := e.do("GET", "/v1/jobs/"+j.ID, nil).want(http.StatusOK).job().Progress; p == nil || *p != 40 {
		t.Errorf("progress %v", p)
	}
	e.do("POST", "/v1/jobs/"+j.ID+"/extend", map[string]any{"token": tok, "progress": 101}).field("progress")
	e.do("POST", "/v1/jobs/"+j.ID+"/extend", map[string]any{"token": tok, "extend_ms": 0}).field("extend_ms")
	e.do("POST", "/v1/jobs/"+j.ID+"/extend", map[string]any{"token": tok, "extend_ms": 86400001}).field("extend_ms")
	e.do("POST", "/v1/jobs/missing/extend", map[string]any{"token": tok}).problem(http.StatusNotFound, "not_found")
}

func TestRelease(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("q", "k")
	tok := e.lease("w", "q").Lease.Token
	got := e.do("POST", "/v1/jobs/"+j.ID+"/release", map[string]any{"token": tok}).want(http.StatusOK).job()
	if got.State != "available" || got.Attempt != 0 || got.Lease != nil {
		t.Errorf("released %+v", got)
	}
	tok = e.lease("w", "q").Lease.Token
	got = e.do("POST", "/v1/jobs/"+j.ID+"/release", map[string]any{"token": tok, "delay_ms": 1000}).want(http.StatusOK).job()
	if got.State != "scheduled" || got.RunAt != ms(t0.Add(time.Second)) {
		t.Errorf("released with delay %+v", got)
	}
	e.do("POST", "/v1/jobs/"+j.ID+"/release", map[string]any{"token": tok, "delay_ms": 31536000001}).field("delay_ms")
}

func TestSettle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a, b := e.enqueue("q", "k"), e.enqueue("q", "k")
	ta, tb := e.lease("w", "q").Lease.Token, e.lease("w", "q").Lease.Token
	body := map[string]any{
		"acks": []any{
			map[string]any{"id": a.ID, "token": ta, "result": 1},
			map[string]any{"id": "missing", "token": ta},
		},
		"fails": []any{
			map[string]any{"id": b.ID, "token": tb, "error": "x", "retry": false},
			map[string]any{"id": a.ID, "token": "stale", "error": "x"},
		},
	}
	var out struct {
		Results []struct {
			ID   string
			OK   bool
			Code string
		}
	}
	e.do("POST", "/v1/settle", body).want(http.StatusOK).into(&out)
	want := []struct {
		id   string
		ok   bool
		code string
	}{{a.ID, true, ""}, {"missing", false, "not_found"}, {b.ID, true, ""}, {a.ID, false, "lease_lost"}}
	if len(out.Results) != len(want) {
		t.Fatalf("results %+v", out.Results)
	}
	for i, w := range want {
		if r := out.Results[i]; r.ID != w.id || r.OK != w.ok || r.Code != w.code {
			t.Errorf("result %d = %+v, want %+v", i, r, w)
		}
	}
	if got := e.do("GET", "/v1/jobs/"+b.ID, nil).want(http.StatusOK).job(); got.State != "dead" {
		t.Errorf("failed item: %s", got.State)
	}
}

func TestSettleInvalid(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct {
		body  string // request body
		field string // the field the 400 names
	}{
		{`{}`, "acks"},
		{`{"acks":[],"fails":[]}`, "acks"},
		{`{"acks":[{"token":"t"}]}`, "acks[0].id"},
		{`{"acks":[{"id":"j","token":"t"},{"id":"j"}]}`, "acks[1].token"},
		{`{"acks":[{"id":"j","token":"t","retry":true}]}`, "acks[0].retry"},
		{`{"fails":[{"id":"j","token":"t"}]}`, "fails[0].error"},
		{`{"fails":[{"id":"j","token":"t","error":"e","retry":1}]}`, "fails[0].retry"},
		{`{"fails":[5]}`, "fails[0]"},
		{`{"nacks":[]}`, "nacks"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			e := *e
			e.t = t
			e.do("POST", "/v1/settle", tt.body).field(tt.field)
		})
	}
}
