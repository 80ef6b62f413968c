package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// recorded is one request the test server saw.
type recorded struct {
	method, path, body string
	header             http.Header
}

// setup serves answer for every request and records what came in.
func setup(t *testing.T, status int, answer string) (*client.Client, *recorded) {
	t.Helper()
	rec := &recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*rec = recorded{r.Method, r.URL.EscapedPath(), string(b), r.Header.Clone()}
		if status >= 400 {
			w.Header().Set("Content-Type", "application/problem+json")
		}
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL + "/")
	c.Token = "secret"
	return c, rec
}

func TestEnqueue(t *testing.T) {
	t.Parallel()
	c, rec := setup(t, 201, `{"id":"j1","state":"available","run_at":"2025-06-01T12:00:00.000Z","lease":null}`)
	j, err := c.Enqueue(t.Context(), client.JobSpec{Kind: "email", Payload: json.RawMessage(`{"to":"a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != "j1" || j.State != "available" || j.RunAt.Hour() != 12 {
		t.Errorf("job = %+v", j)
	}
	if rec.method != "POST" || rec.path != "/v1/jobs" || rec.body != `{"kind":"email","payload":{"to":"a"}}` {
		t.Errorf("request = %s %s %s", rec.method, rec.path, rec.body)
	}
	if rec.header.Get("Authorization") != "Bearer secret" || rec.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", rec.header)
	}
}

func TestEnqueueIdempotent(t *testing.T) {
	t.Parallel()
	c, rec := setup(t, 200, `{"id":"j1"}`)
	if _, err := c.EnqueueIdempotent(t.Context(), "k-1", client.JobSpec{Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if got := rec.header.Get("Idempotency-Key"); got != "k-1" {
		t.Errorf("Idempotency-Key = %q", got)
	}
}

func TestRequests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tests := []struct {
		name   string
		call   func(c *client.Client) error
		answer string
		path   string // escaped path the server saw
		body   string
	}{
		{"batch", func(c *client.Client) error {
			_, err := c.EnqueueBatch(ctx, []client.JobSpec{{Kind: "a"}, {Kind: "b", Queue: "q"}})
			return err
		}, `{"jobs":[{"id":"1"},{"id":"2"}]}`, "/v1/jobs/batch", `{"jobs":[{"kind":"a"},{"kind":"b","queue":"q"}]}`},
		{"lease", func(c *client.Client) error {
			_, err := c.Lease(ctx, client.LeaseRequest{WorkerID: "w", Queues: []string{"q"}, Max: 10, WaitMS: 100})
			return err
		}, `{"jobs":[]}`, "/v1/lease", `{"worker_id":"w","queues":["q"],"max":10,"wait_ms":100}`},
		{"settle", func(c *client.Client) error {
			_, err := c.Settle(ctx, []client.Ack{{ID: "1", Token: "t"}}, nil)
			return err
		}, `{"results":[{"id":"1","ok":true}]}`, "/v1/settle", `{"acks":[{"id":"1","token":"t"}]}`},
		{"ack", func(c *client.Client) error {
			_, err := c.Ack(ctx, "j/1", "t", json.RawMessage(`7`))
			return err
		}, `{"id":"j/1"}`, "/v1/jobs/j%2F1/ack", `{"token":"t","result":7}`},
		{"fail", func(c *client.Client) error {
			no := false
			_, err := c.Fail(ctx, "j1", client.Fail{ID: "ignored", Token: "t", Error: "boom", Retry: &no})
			return err
		}, `{"id":"j1"}`, "/v1/jobs/j1/fail", `{"token":"t","error":"boom","retry":false}`},
		{"release", func(c *client.Client) error {
			_, err := c.Release(ctx, "j1", "t", 0)
			return err
		}, `{"id":"j1"}`, "/v1/jobs/j1/release", `{"token":"t"}`},
		{"extend", func(c *client.Client) error {
			p := 50
			_, err := c.Extend(ctx, "j1", "t", 1000, &p)
			return err
		}, `{"expires_at":"x","cancel_requested":false}`, "/v1/jobs/j1/extend", `{"token":"t","extend_ms":1000,"progress":50}`},
		{"register", func(c *client.Client) error {
			_, err := c.RegisterWorker(ctx, client.WorkerRegistration{Queues: []string{"q"}})
			return err
		}, `{"id":"w","heartbeat_interval_ms":5000,"dead_after_ms":15000}`, "/v1/workers", `{"queues":["q"]}`},
		{"heartbeat", func(c *client.Client) error {
			_, err := c.Heartbeat(ctx, "10.0.0.5:8080/w-3", nil)
			return err
		}, `{"cancel":[],"lost":[]}`, "/v1/workers/10.0.0.5:8080%2Fw-3/heartbeat", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := setup(t, 200, tt.answer)
			if err := tt.call(c); err != nil {
				t.Fatal(err)
			}
			if rec.method != "POST" || rec.path != tt.path || rec.body != tt.body {
				t.Errorf("request = %s %s %s, want POST %s %s", rec.method, rec.path, rec.body, tt.path, tt.body)
			}
		})
	}
}

func TestGetJobAttempts(t *testing.T) {
	t.Parallel()
	c, rec := setup(t, 200, `{"id":"j1","attempts":[{"attempt":1,"outcome":"orphaned","recovered_by":"n1","last_heartbeat_at":"2025-06-01T12:00:00.000Z"}]}`)
	j, err := c.GetJob(t.Context(), "j1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.method != "GET" || rec.body != "" {
		t.Errorf("request = %s %q", rec.method, rec.body)
	}
	if len(j.Attempts) != 1 || *j.Attempts[0].RecoveredBy != "n1" || j.Attempts[0].LastHeartbeatAt == nil {
		t.Errorf("attempts = %+v", j.Attempts)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, 409, `{"type":"urn:tether:error:lease_lost","title":"Lease lost","status":409,"detail":"token is stale","code":"lease_lost","job_id":"j1"}`)
	_, err := c.Ack(t.Context(), "j1", "old", nil)
	if !errors.Is(err, client.ErrLeaseLost) || errors.Is(err, client.ErrNotFound) {
		t.Fatalf("err = %v, want lease_lost only", err)
	}
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 409 || e.JobID != "j1" || !strings.Contains(e.Error(), "token is stale") {
		t.Errorf("error = %+v", e)
	}

	c, _ = setup(t, 502, `bad gateway`)
	_, err = c.GetJob(t.Context(), "j1")
	if !errors.As(err, &e) || e.Status != 502 || e.Detail != "bad gateway" {
		t.Errorf("error = %+v", err)
	}
}

func TestHeartbeatAnswer(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, 200, `{"cancel":["a"],"lost":["b"],"heartbeat_interval_ms":5000,"dead_after_ms":15000}`)
	hb, err := c.Heartbeat(t.Context(), "w", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if hb.Cancel[0] != "a" || hb.Lost[0] != "b" || hb.HeartbeatIntervalMS != 5000 || hb.DeadAfterMS != 15000 {
		t.Errorf("heartbeat answer = %+v", hb)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":503,"code":"unavailable"}`)
	}))
	t.Cleanup(srv.Close)
	_, err := client.New(srv.URL).GetJob(t.Context(), "j1")
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "unavailable" || e.RetryAfter != 2*time.Second {
		t.Errorf("error = %+v, want unavailable with Retry-After 2s", err)
	}
}

// A job read back carries the trace, flow-control and schedule fields, and
// a job written out again (tether work's job file) carries no lease token.
func TestJobFields(t *testing.T) {
	t.Parallel()
	c, rec := setup(t, 201, `{"id":"j1","trace":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=b"},`+
		`"concurrency_key":"tenant-1","schedule":"nightly","scheduled_for":"2025-06-01T02:00:00.000Z","backoff":{"base_ms":1000,"max_ms":60000},`+
		`"lease":{"worker_id":"w","token":"secret","expires_at":"2025-06-01T02:00:30.000Z"}}`)
	j, err := c.Enqueue(t.Context(), client.JobSpec{Kind: "k", ConcurrencyKey: "tenant-1",
		Trace: &client.Trace{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.body != `{"kind":"k","trace":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"concurrency_key":"tenant-1"}` {
		t.Errorf("spec sent as %s", rec.body)
	}
	if j.Trace == nil || j.Trace.Tracestate != "a=b" || *j.ConcurrencyKey != "tenant-1" || *j.Schedule != "nightly" ||
		j.ScheduledFor.Hour() != 2 || j.Backoff.MaxMS != 60000 {
		t.Errorf("job = %+v", j)
	}
	j.Lease.Token = ""
	b, _ := json.Marshal(j)
	if strings.Contains(string(b), "token") {
		t.Errorf("a job without its token still encodes one: %s", b)
	}
}
