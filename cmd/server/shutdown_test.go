package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

// TestGracefulShutdownAnswersLongPoll sends SIGTERM while a lease waits
// 30 s on an empty queue: the poll answers {"jobs":[]} at once and the
// process exits cleanly.
func TestGracefulShutdownAnswersLongPoll(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.db")
	srv := startServer(t, path)

	sent := make(chan struct{})
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(sent) }}
	body := `{"worker_id":"w-1","queues":["empty"],"wait_ms":30000}`
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "POST", srv.url+"/v1/lease", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	start := time.Now()
	go func() {
		resp, err := http.DefaultTransport.(*http.Transport).Clone().RoundTrip(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, string(bytes.TrimSpace(b)), err}
	}()
	<-sent
	// The server gives no sign that the handler is waiting; a moment lets
	// it get there. Either order must answer empty, so this only makes the
	// test exercise the waiting case.
	time.Sleep(300 * time.Millisecond)

	exit := srv.signal(t, syscall.SIGTERM)
	a := <-answered
	if a.err != nil || a.status != 200 || a.body != `{"jobs":[]}` {
		t.Errorf("waiting lease answered %d %q (%v), want 200 {\"jobs\":[]}", a.status, a.body, a.err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the lease answered after %v, want well before its 30s wait", d)
	}
	if exit != nil {
		t.Errorf("server exit = %v, want 0", exit)
	}
	if out := srv.output(); !strings.Contains(out, "shutting down") || !strings.Contains(out, "node stopped") {
		t.Errorf("output lacks the shutdown and node stop lines:\n%s", out)
	}
	// The node said it stopped: /v1/nodes of any replica shows it gone.
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	nodes, err := st.NodeList(t.Context(), &store.NodeListParams{})
	if err != nil || len(nodes) != 1 || nodes[0].StoppedAt == nil {
		t.Errorf("after shutdown the store lists nodes %+v (%v), want the one node, stopped", nodes, err)
	}
}
