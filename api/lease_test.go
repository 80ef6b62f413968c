package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// emptyLeases wraps a store and signals each lease attempt that found
// nothing, so a test knows a long-poll is about to wait.
type emptyLeases struct {
	store.Store
	empty chan struct{}
}

func (s *emptyLeases) JobLease(ctx context.Context, p *store.JobLeaseParams) ([]*store.Job, error) {
	jobs, err := s.Store.JobLease(ctx, p)
	if err == nil && len(jobs) == 0 {
		s.empty <- struct{}{}
	}
	return jobs, err
}

func setupSignal(t *testing.T) (*env, *emptyLeases) {
	sig := &emptyLeases{empty: make(chan struct{}, 8)}
	e := setup(t, withStore(func(s store.Store) store.Store { sig.Store = s; return sig }))
	return e, sig
}

// wakeLimit is far below wait_ms: a long-poll answering within it was
// woken, not timed out.
const wakeLimit = 10 * time.Second

// startLease sends a 30 s long-poll on queue q in the background.
func (e *env) startLease(q string) <-chan *response {
	done := make(chan *response, 1)
	go func() {
		done <- e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["`+q+`"],"wait_ms":30000}`)
	}()
	return done
}

func await(t *testing.T, done <-chan *response) []job {
	t.Helper()
	select {
	case res := <-done:
		var out struct{ Jobs []job }
		res.want(http.StatusOK).into(&out)
		if out.Jobs == nil {
			t.Fatalf("jobs is not an array: %s", res.Body)
		}
		return out.Jobs
	case <-time.After(wakeLimit):
		t.Fatal("long-poll did not answer")
		return nil
	}
}

func TestLease(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var out struct{ Jobs []job }
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"]}`).want(http.StatusOK).into(&out)
	if out.Jobs == nil || len(out.Jobs) != 0 {
		t.Fatalf("empty lease: %+v", out)
	}
	for range 3 {
		e.enqueue("q", "k")
	}
	e.enqueue("q", "other")
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"],"max":2,"kinds":["k"]}`).want(http.StatusOK).into(&out)
	if len(out.Jobs) != 2 {
		t.Fatalf("leased %d, want 2", len(out.Jobs))
	}
	j := out.Jobs[0]
	if j.State != "running" || j.Attempt != 1 || j.Lease == nil || j.Lease.WorkerID != "w" ||
		j.Lease.Token == "" || j.Lease.ExpiresAt != ms(t0.Add(30*time.Minute)) {
		t.Errorf("leased job %+v lease %+v", j, j.Lease)
	}
}

func TestLeaseLongPollWokenByEnqueue(t *testing.T) {
	t.Parallel()
	e, sig := setupSignal(t)
	done := e.startLease("q")
	<-sig.empty
	e.enqueue("elsewhere", "k") // another queue's job: the poll sleeps on
	contains(t, string(e.do("GET", "/metrics", nil).want(http.StatusOK).Body), "tether_long_polls_waiting 1\n")
	want := e.enqueue("q", "k")
	jobs := await(t, done)
	if len(jobs) != 1 || jobs[0].ID != want.ID {
		t.Fatalf("long-poll answered %+v, want %s", jobs, want.ID)
	}
	if n := len(sig.empty); n != 0 {
		t.Errorf("the poll leased %d more times in vain: a job in another queue woke it", n)
	}
	contains(t, string(e.do("GET", "/metrics", nil).want(http.StatusOK).Body), "tether_long_polls_waiting 0\n")
}

func TestLeaseWaitRunsOut(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var out struct{ Jobs []job }
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"],"wait_ms":1}`).want(http.StatusOK).into(&out)
	if out.Jobs == nil || len(out.Jobs) != 0 {
		t.Fatalf("got %+v", out)
	}
}

func TestLeaseShutdownAnswersWaiting(t *testing.T) {
	t.Parallel()
	e, sig := setupSignal(t)
	done := e.startLease("q")
	<-sig.empty
	close(e.shutdown)
	if jobs := await(t, done); len(jobs) != 0 {
		t.Fatalf("got %+v", jobs)
	}
	// After shutdown, a new long-poll does not wait either.
	if jobs := await(t, e.startLease("q")); len(jobs) != 0 {
		t.Fatalf("got %+v", jobs)
	}
}

func TestLeaseClientGone(t *testing.T) {
	t.Parallel()
	e, sig := setupSignal(t)
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, "POST", "/v1/lease",
		strings.NewReader(`{"worker_id":"w","queues":["q"],"wait_ms":30000}`))
	done := make(chan struct{})
	go func() {
		e.handler.ServeHTTP(httptest.NewRecorder(), req)
		close(done)
	}()
	<-sig.empty
	cancel()
	select {
	case <-done:
	case <-time.After(wakeLimit):
		t.Fatal("handler kept waiting after the client left")
	}
}

func TestLeaseInvalid(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct {
		body  string // request body
		field string // the field the 400 names
	}{
		{`{"queues":["q"]}`, "worker_id"},
		{`{"worker_id":"","queues":["q"]}`, "worker_id"},
		{`{"worker_id":"` + strings.Repeat("w", 201) + `","queues":["q"]}`, "worker_id"},
		{`{"worker_id":"a\u0007b","queues":["q"]}`, "worker_id"},
		{`{"worker_id":"w"}`, "queues"},
		{`{"worker_id":"w","queues":[]}`, "queues"},
		{`{"worker_id":"w","queues":["ok","bad queue"]}`, "queues[1]"},
		{`{"worker_id":"w","queues":"q"}`, "queues"},
		{`{"worker_id":"w","queues":["q"],"max":0}`, "max"},
		{`{"worker_id":"w","queues":["q"],"max":1001}`, "max"},
		{`{"worker_id":"w","queues":["q"],"wait_ms":-1}`, "wait_ms"},
		{`{"worker_id":"w","queues":["q"],"wait_ms":30001}`, "wait_ms"},
		{`{"worker_id":"w","queues":["q"],"kinds":["a b"]}`, "kinds[0]"},
		{`{"worker_id":"w","queues":["q"],"queue":"q"}`, "queue"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			e := *e
			e.t = t
			e.do("POST", "/v1/lease", tt.body).field(tt.field)
		})
	}
}

// DELETE /v1/workers/{id} answers the worker's waiting long-polls at once;
// another worker's poll waits on.
func TestDeregisterEndsLongPolls(t *testing.T) {
	t.Parallel()
	e, sig := setupSignal(t)
	gone := e.startLease("q") // worker "w"
	<-sig.empty
	other := make(chan *response, 1)
	go func() {
		other <- e.do("POST", "/v1/lease", `{"worker_id":"w-other","queues":["q"],"wait_ms":30000}`)
	}()
	<-sig.empty
	e.do("DELETE", "/v1/workers/w", nil).want(http.StatusNoContent)
	if jobs := await(t, gone); len(jobs) != 0 {
		t.Fatalf("the deregistered worker's poll answered %+v, want no job", jobs)
	}
	want := e.enqueue("q", "k")
	if jobs := await(t, other); len(jobs) != 1 || jobs[0].ID != want.ID {
		t.Errorf("the other worker's poll answered %+v, want %s", jobs, want.ID)
	}
}

func TestHeartbeatTellsTheRhythm(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var hb struct {
		HeartbeatIntervalMS int64 `json:"heartbeat_interval_ms"`
		DeadAfterMS         int64 `json:"dead_after_ms"`
	}
	e.do("POST", "/v1/workers/w/heartbeat", `{}`).want(http.StatusOK).into(&hb)
	if hb.HeartbeatIntervalMS != store.DefaultHeartbeatInterval.Milliseconds() || hb.DeadAfterMS != store.DefaultDeadAfter.Milliseconds() {
		t.Errorf("heartbeat answered interval %d ms, dead after %d ms; want the server's %v and %v",
			hb.HeartbeatIntervalMS, hb.DeadAfterMS, store.DefaultHeartbeatInterval, store.DefaultDeadAfter)
	}
}
