package api_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
)

type panicking struct{ store.Store }

func (panicking) QueueList(context.Context, *store.QueueListParams) ([]*store.Queue, error) {
	panic("boom in the store")
}

func TestPanicAnswersProblem(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	e := setup(t, withStore(func(s store.Store) store.Store { return panicking{s} }),
		func(c *api.Config) { c.Logger = newTextLogger(&log) })
	res := e.do("GET", "/v1/queues", nil, "X-Request-Id", "req-42")
	p := res.problem(http.StatusInternalServerError, "internal")
	if strings.Contains(p["detail"].(string), "boom") {
		t.Errorf("the panic leaked into the answer: %v", p)
	}
	contains(t, log.String(), `msg="handler panicked"`, "boom in the store", "request_id=req-42", "stack=", "panicking.QueueList")
	// The server goes on serving.
	e.do("GET", "/healthz", nil).want(http.StatusOK)
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	e := setup(t, withStore(func(s store.Store) store.Store { return failingList{s} }),
		func(c *api.Config) { c.Logger = newTextLogger(&log) })
	if got := e.do("GET", "/healthz", nil, "X-Request-Id", "abc-123").Header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("X-Request-Id %q, want the request's", got)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 129), "quote\"d"} {
		got := e.do("GET", "/healthz", nil, "X-Request-Id", bad).Header.Get("X-Request-Id")
		if got == "" || got == bad {
			t.Errorf("X-Request-Id %q for %q, want a fresh one", got, bad)
		}
	}
	e.do("GET", "/v1/queues", nil, "X-Request-Id", "req-7").want(http.StatusInternalServerError)
	contains(t, log.String(), "request_id=req-7")
}

// TestLongPollCap: one worker id gets MaxPollsPerWorker long-polls
// waiting; one more is 429 with Retry-After. Short polls and other
// workers are not counted.
func TestLongPollCap(t *testing.T) {
	t.Parallel()
	sig := &emptyLeases{empty: make(chan struct{}, 8)}
	e := setup(t, withStore(func(s store.Store) store.Store { sig.Store = s; return sig }),
		func(c *api.Config) { c.MaxPollsPerWorker = 1 })
	done := e.startLease("q")
	<-sig.empty
	res := e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"],"wait_ms":1000}`)
	res.problem(http.StatusTooManyRequests, "rate_limited")
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"]}`).want(http.StatusOK)
	e.do("POST", "/v1/lease", `{"worker_id":"w2","queues":["q"],"wait_ms":1}`).want(http.StatusOK)
	close(e.shutdown)
	await(t, done)
	// The answered poll gave its slot back.
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"],"wait_ms":1000}`).want(http.StatusOK)
}

// TestLongPollOutlivesTimeouts: a long-poll answers after its wait even on
// a server whose read and write timeouts are shorter.
func TestLongPollOutlivesTimeouts(t *testing.T) {
	t.Parallel()
	e := setup(t)
	srv := httptest.NewUnstartedServer(e.handler)
	srv.Config.ReadTimeout = 100 * time.Millisecond
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/v1/lease", "application/json",
		strings.NewReader(`{"worker_id":"w","queues":["q"],"wait_ms":700}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(out.String(), `"jobs":[]`) {
		t.Errorf("long-poll answered %d %q, %v", resp.StatusCode, out.String(), err)
	}
}

// TestSlowBodyRefused: a body that stops arriving is cut off after
// BodyTimeout with a 400, instead of holding the handler.
func TestSlowBodyRefused(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *api.Config) { c.BodyTimeout = 200 * time.Millisecond })
	resp, body := stall(t, e.handler, "POST /v1/jobs HTTP/1.1\r\nHost: tether\r\nContent-Type: application/json\r\n"+
		"Content-Length: 40\r\n\r\n{\"kind\":")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "did not arrive in time") {
		t.Errorf("stalled body: %d %s", resp.StatusCode, body)
	}
}

// TestUnsentBodyCutOff: the body deadline holds on every route, not only
// where a handler reads the body. A GET that declares a body and never
// sends it is answered once the deadline passes (net/http drains a small
// unread body before answering, and without a deadline would wait for
// good), and the connection is closed after the answer.
func TestUnsentBodyCutOff(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *api.Config) { c.BodyTimeout = 200 * time.Millisecond })
	resp, body := stall(t, e.handler, "GET /healthz HTTP/1.1\r\nHost: tether\r\nContent-Length: 10\r\n\r\n")
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("GET with an unsent body: %d %s, close %v", resp.StatusCode, body, resp.Close)
	}
}

// stall writes raw (a request whose body never arrives whole) to a server
// of h and returns the answer, failing the test if none comes within 10 s.
func stall(t *testing.T, h http.Handler, raw string) (*http.Response, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestConnCapPerClient: one client address gets the cap of connections
// open at once; one more is closed at once, another address is counted
// apart, and a closed connection gives its slot back.
func TestConnCapPerClient(t *testing.T) {
	t.Parallel()
	e := setup(t)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := e.api.LimitConns(raw, 2)
	t.Cleanup(func() { _ = ln.Close() })
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	accepted := make(chan net.Conn, 1)
	acceptNext := func() {
		go func() {
			if c, err := ln.Accept(); err == nil {
				accepted <- c
			}
		}()
	}
	next := func(what string) net.Conn {
		t.Helper()
		select {
		case c := <-accepted:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not accepted", what)
			return nil
		}
	}
	dial("127.0.0.1")
	acceptNext()
	first := next("first connection")
	dial("127.0.0.1")
	acceptNext()
	next("second connection")

	over := dial("127.0.0.1")
	acceptNext() // closes over, then waits for the next
	_ = over.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := over.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a connection over the cap was not closed: %v", err)
	}
	dial("127.0.0.2")
	if c := next("another address"); !strings.HasPrefix(c.RemoteAddr().String(), "127.0.0.2:") {
		t.Errorf("accepted %s, want the connection from 127.0.0.2", c.RemoteAddr())
	}
	_ = first.Close()
	dial("127.0.0.1")
	acceptNext()
	next("a connection after one closed")
	contains(t, string(e.do("GET", "/metrics", nil).want(http.StatusOK).Body), "tether_connections_refused_total 1")
}

// TestLongPollCapPerToken: one token gets MaxPollsPerToken long-polls
// waiting, whatever their worker ids; one more is 429 with Retry-After.
// Other tokens and short polls are not counted, and an answered poll gives
// its slot back.
func TestLongPollCapPerToken(t *testing.T) {
	t.Parallel()
	sig := &emptyLeases{empty: make(chan struct{}, 8)}
	e := setup(t, withTokens, withStore(func(s store.Store) store.Store { sig.Store = s; return sig }),
		func(c *api.Config) { c.MaxPollsPerToken = 1 })
	poll := func(token, worker string, waitMS int) *response {
		return e.do("POST", "/v1/lease", fmt.Sprintf(`{"worker_id":%q,"queues":["q"],"wait_ms":%d}`, worker, waitMS), bearer(token)...)
	}
	done := make(chan *response, 1)
	go func() { done <- poll("work", "w1", 30000) }()
	<-sig.empty
	res := poll("work", "w2", 1000)
	res.problem(http.StatusTooManyRequests, "rate_limited")
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	poll("work", "w2", 0).want(http.StatusOK)
	poll("adm", "w3", 1).want(http.StatusOK)
	close(e.shutdown)
	await(t, done)
	poll("work", "w2", 1).want(http.StatusOK)
}
