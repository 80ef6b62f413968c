package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/client"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

// server is the real API over a SQLite file, behind a middleware that
// records every request and can fail the ones a test picks.
type server struct {
	url string
	st  *sqlite.Store
	c   *client.Client

	mu    sync.Mutex
	seen  []call
	fault func(r *http.Request, body []byte) fault
	wake  chan struct{} // a request was recorded
}

// call is one request the server saw, when it had been answered.
type call struct {
	at    time.Time
	route string // "POST /v1/jobs/{id}/ack", the id as is
	body  string
}

// fault is what the middleware does to a request instead of serving it.
type fault int

const (
	serve    fault = iota
	drop           // close the connection unanswered, the request not served
	loseIt         // serve it, then close the connection: the answer is lost
	down           // 503 unavailable, without Retry-After
	downSlow       // 503 unavailable, Retry-After: 1
	refuse         // 401 unauthorized
	invalid        // 400 invalid_request
)

// newServer starts a server whose workers heartbeat every heartbeat.
func newServer(t *testing.T, heartbeat time.Duration, tokens ...api.Token) *server {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := api.New(api.Config{Store: st, HeartbeatInterval: heartbeat, DeadAfter: 3 * heartbeat, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{st: st, wake: make(chan struct{}, 1)}
	h := a.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f := s.faultFor(r, body)
		switch f {
		case serve:
			h.ServeHTTP(w, r)
		case loseIt:
			h.ServeHTTP(httptest.NewRecorder(), r)
			fallthrough
		case drop:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case down, downSlow:
			if f == downSlow {
				w.Header().Set("Retry-After", "1")
			}
			problem(w, http.StatusServiceUnavailable, "unavailable")
		case refuse:
			problem(w, http.StatusUnauthorized, "unauthorized")
		case invalid:
			problem(w, http.StatusBadRequest, "invalid_request")
		}
		s.record(r, body)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	s.c = client.New(srv.URL)
	s.c.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	return s
}

func problem(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"urn:tether:error:%s","title":%q,"status":%d,"code":%q}`, code, http.StatusText(status), status, code)
}

// failFirst returns a fault func that answers the first n requests whose
// path ends with suffix with f, and serves everything else.
func failFirst(suffix string, n int, f fault) func(*http.Request, []byte) fault {
	return func(r *http.Request, _ []byte) fault {
		if strings.HasSuffix(r.URL.Path, suffix) && n > 0 {
			n--
			return f
		}
		return serve
	}
}

// faults combines fault funcs: the first that does not serve decides.
func faults(fs ...func(*http.Request, []byte) fault) func(*http.Request, []byte) fault {
	return func(r *http.Request, b []byte) fault {
		for _, f := range fs {
			if v := f(r, b); v != serve {
				return v
			}
		}
		return serve
	}
}

func (s *server) faultFor(r *http.Request, body []byte) fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fault == nil {
		return serve
	}
	return s.fault(r, body)
}

// setFault makes f decide every request from now on.
func (s *server) setFault(f func(r *http.Request, body []byte) fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

func (s *server) record(r *http.Request, body []byte) {
	s.mu.Lock()
	s.seen = append(s.seen, call{time.Now(), r.Method + " " + r.URL.Path, string(body)})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// calls returns the requests seen so far whose route ends with suffix.
func (s *server) calls(suffix string) []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []call
	for _, c := range s.seen {
		if strings.HasSuffix(c.route, suffix) {
			out = append(out, c)
		}
	}
	return out
}

// await waits until cond holds over the requests seen, re-checking as each
// new one is recorded; it fails the test after 20 s.
func (s *server) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-s.wake:
		case <-deadline:
			t.Fatalf("no %s within 20s", what)
		}
	}
}

// enqueue adds a job of kind to queue with timeout and returns its id.
func (s *server) enqueue(t *testing.T, queue, kind string, timeout time.Duration) string {
	t.Helper()
	j, err := s.c.Enqueue(t.Context(), client.JobSpec{Queue: queue, Kind: kind, Payload: json.RawMessage(`{"n":1}`),
		TimeoutMS: timeout.Milliseconds(), MaxAttempts: 5})
	if err != nil {
		t.Fatal(err)
	}
	return j.ID
}

func (s *server) job(t *testing.T, id string) *client.Job {
	t.Helper()
	j, err := s.c.GetJob(context.WithoutCancel(t.Context()), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// post sends an admin request the client has no method for.
func (s *server) post(t *testing.T, method, path string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, s.url+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
	}
}

// workers lists the registered worker ids.
func (s *server) workers(t *testing.T) []string {
	t.Helper()
	ws, err := s.st.WorkerList(context.WithoutCancel(t.Context()), &store.WorkerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.ID)
	}
	return ids
}

// runner returns a Runner on s for queue, logging to the test.
func (s *server) runner(t *testing.T, queue string, h client.Handler) *client.Runner {
	return &client.Runner{Client: s.c, Queues: []string{queue}, Handler: h, WorkerID: "w-" + queue,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// started is a handler's signal that it runs job id.
type started chan string

func (c started) wait(t *testing.T) string {
	t.Helper()
	select {
	case id := <-c:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("no handler started within 20s")
		return ""
	}
}

// runAsync runs r until the returned stop is called, which waits for Run
// to return and hands back its error.
func runAsync(t *testing.T, r *client.Runner) (stop func() error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(cancel)
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("Run did not return within 30s of its ctx ending")
		}
	}
}
