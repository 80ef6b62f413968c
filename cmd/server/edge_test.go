package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/web"
)

// inProcess is a server run by run in the test's own process: cheaper than
// the binary when a test is about the HTTP side alone.
type inProcess struct {
	url  string
	addr string // host:port
	mu   sync.Mutex
	out  strings.Builder
}

// serveInProcess runs the server on a free loopback port over a fresh
// SQLite file with args, and stops it at cleanup.
func serveInProcess(t *testing.T, args ...string) *inProcess {
	t.Helper()
	args = append([]string{"--addr", "127.0.0.1:0", "--store", "sqlite:" + filepath.Join(t.TempDir(), "t.db"),
		"--node-id", "test-node"}, args...)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, env(nil), pw)
		_ = pw.Close()
		done <- err
	}()
	p := &inProcess{}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
	}()
	select {
	case p.url = <-listening:
	case err := <-done:
		t.Fatalf("server ended before listening: %v\n%s", err, p.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("no listen line within 30s:\n%s", p.output())
	}
	p.addr = strings.TrimPrefix(p.url, "http://")
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return p
}

func (p *inProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// rawExchange writes raw to a new connection to addr and reads one answer,
// failing the test if none comes within 10 s.
func rawExchange(t *testing.T, addr, raw string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
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
		t.Fatalf("no answer to %q: %v", raw, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp
}

// TestBodyDeadlineEveryRoute: the body deadline holds beyond /v1. A login
// whose body stops arriving is answered 400 at the deadline, and a
// dashboard GET that declares a body it never sends is answered too,
// instead of either holding its connection for good.
func TestBodyDeadlineEveryRoute(t *testing.T) {
	t.Parallel()
	srv := serveInProcess(t, "--tokens", "adm-token-0123456789:admin", "--body-timeout", "200ms")
	resp := rawExchange(t, srv.addr, "POST /login HTTP/1.1\r\nHost: "+srv.addr+"\r\n"+
		"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\ntoken=adm")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("login with a stalled body: %d, want 400", resp.StatusCode)
	}
	resp = rawExchange(t, srv.addr, "GET /queues HTTP/1.1\r\nHost: "+srv.addr+"\r\nContent-Length: 10\r\n\r\n")
	if resp.StatusCode != http.StatusSeeOther || !resp.Close {
		t.Errorf("dashboard GET with an unsent body: %d, close %v", resp.StatusCode, resp.Close)
	}
	if strings.Contains(srv.output(), "dashboard login refused") {
		t.Errorf("a cut-off login counted as a refused token:\n%s", srv.output())
	}
}

// TestConnCapPerIP: with --max-conns-per-ip 1, a second connection from
// the same address is closed while the first is open.
func TestConnCapPerIP(t *testing.T) {
	t.Parallel()
	srv := serveInProcess(t, "--max-conns-per-ip", "1")
	first, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := second.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection over the cap was not closed: %v", err)
	}
	// The first is served as usual.
	if _, err := io.WriteString(first, "GET /healthz HTTP/1.1\r\nHost: "+srv.addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(first), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the connection within the cap: %v %v", resp, err)
	}
}

// TestAllowedHostsDefault: the Host check is on by default only where it
// cannot lock out a legitimate client: serving a loopback address without
// tokens. --allowed-hosts sets it anywhere, and must hold host names.
func TestAllowedHostsDefault(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string // hosts joined by commas
	}{
		{[]string{"--addr", "127.0.0.1:8080"}, "localhost,127.0.0.1,::1"},
		{[]string{"--addr", "127.0.0.2:0"}, "localhost,127.0.0.1,::1,127.0.0.2"},
		{[]string{"--addr", "localhost:8080"}, "localhost,127.0.0.1,::1"},
		{[]string{"--addr", "127.0.0.1:8080", "--tokens", "a:admin"}, ""},
		{[]string{"--addr", "0.0.0.0:8080", "--insecure-no-auth"}, ""},
		{[]string{"--addr", "0.0.0.0:8080", "--insecure-no-auth", "--allowed-hosts", "tether.lan, 10.0.0.5"}, "tether.lan,10.0.0.5"},
		{[]string{"--addr", "0.0.0.0:8080", "--tokens", "a:admin", "--allowed-hosts", "tether.example"}, "tether.example"},
	} {
		c, err := parseConfig(tt.args, env(nil), io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if got := strings.Join(c.hosts(c.addr), ","); got != tt.want {
			t.Errorf("%q: hosts %q, want %q", tt.args, got, tt.want)
		}
	}
	for _, bad := range []string{"tether.lan:8080", "a,,b", "http://tether.lan", "*.lan"} {
		if _, err := parseConfig([]string{"--allowed-hosts", bad}, env(nil), io.Discard); err == nil ||
			!strings.Contains(err.Error(), "--allowed-hosts") {
			t.Errorf("--allowed-hosts %q: %v", bad, err)
		}
	}
}

// TestOpenServerRefusesRebinding: a server open on loopback answers only
// to loopback names, on the API and the dashboard alike (a page whose own
// name was rebound to 127.0.0.1 gets 403), and refuses cross-site writes.
func TestOpenServerRefusesRebinding(t *testing.T) {
	t.Parallel()
	srv := serveInProcess(t)
	_, port, _ := net.SplitHostPort(srv.addr)
	for _, tt := range []struct {
		req    string
		status int
	}{
		{"GET /v1/queues HTTP/1.1\r\nHost: rebound.example:" + port + "\r\n\r\n", 403},
		{"GET / HTTP/1.1\r\nHost: rebound.example:" + port + "\r\n\r\n", 403},
		{"GET /healthz HTTP/1.1\r\nHost: rebound.example:" + port + "\r\n\r\n", 200},
		{"GET /v1/queues HTTP/1.1\r\nHost: localhost:" + port + "\r\n\r\n", 200},
		{"GET / HTTP/1.1\r\nHost: " + srv.addr + "\r\n\r\n", 200},
		{"POST /v1/jobs HTTP/1.1\r\nHost: " + srv.addr + "\r\nSec-Fetch-Site: cross-site\r\nContent-Length: 12\r\n\r\n{\"kind\":\"k\"}", 403},
		{"POST /v1/jobs HTTP/1.1\r\nHost: " + srv.addr + "\r\nContent-Length: 12\r\n\r\n{\"kind\":\"k\"}", 201},
	} {
		if resp := rawExchange(t, srv.addr, tt.req); resp.StatusCode != tt.status {
			t.Errorf("%q: %d, want %d", tt.req, resp.StatusCode, tt.status)
		}
	}
}

// TestAuthFailuresShareOneThrottle: wrong bearer tokens on /v1 and failed
// logins count together per address: after --auth-failures wrong tokens
// at the API, a login with the right admin token is refused with 429 too.
func TestAuthFailuresShareOneThrottle(t *testing.T) {
	t.Parallel()
	srv := serveInProcess(t, "--tokens", "adm-token-0123456789:admin", "--auth-failures", "2")
	call := func(req string) *http.Response {
		return rawExchange(t, srv.addr, strings.ReplaceAll(req, "HOST", srv.addr))
	}
	for range 2 {
		if resp := call("GET /v1/queues HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer guess\r\n\r\n"); resp.StatusCode != 401 {
			t.Fatalf("a wrong token: %d, want 401", resp.StatusCode)
		}
	}
	form := "token=adm-token-0123456789"
	resp := call("POST /login HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
		"Content-Length: " + strconv.Itoa(len(form)) + "\r\n\r\n" + form)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("login after failures at the API: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestSessionKeyNotFromTokens: without --session-key, sessions are signed
// with a random key, different at each start: a cookie no longer verifies
// under the key the tokens used to derive, so it cannot be used to test
// admin-token guesses offline. The server warns that sessions are then its
// own.
func TestSessionKeyNotFromTokens(t *testing.T) {
	t.Parallel()
	const admin = "adm-token-0123456789"
	a, errA := parseConfig([]string{"--tokens", admin + ":admin"}, env(nil), io.Discard)
	b, errB := parseConfig([]string{"--tokens", admin + ":admin"}, env(nil), io.Discard)
	if errA != nil || errB != nil || len(a.sessionKey) < minTokenLen || a.sessionKey == b.sessionKey {
		t.Errorf("random keys %q and %q (%v, %v)", a.sessionKey, b.sessionKey, errA, errB)
	}
	if c, _ := parseConfig(nil, env(nil), io.Discard); c.sessionKey != "" {
		t.Errorf("a key without tokens: %q", c.sessionKey)
	}

	srv := serveInProcess(t, "--tokens", admin+":admin")
	form := "token=" + admin
	resp := rawExchange(t, srv.addr, "POST /login HTTP/1.1\r\nHost: "+srv.addr+"\r\n"+
		"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: "+strconv.Itoa(len(form))+"\r\n\r\n"+form)
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == web.SessionCookie {
			cookie = web.SessionCookie + "=" + c.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == "" {
		t.Fatalf("login: %d, cookie %q", resp.StatusCode, cookie)
	}
	if resp := rawExchange(t, srv.addr, "GET /queues HTTP/1.1\r\nHost: "+srv.addr+"\r\nCookie: "+cookie+"\r\n\r\n"); resp.StatusCode != http.StatusOK {
		t.Errorf("the server refused its own session: %d", resp.StatusCode)
	}
	// The key the tokens derived before: HMAC-SHA256 of the sorted admin
	// tokens under a fixed label.
	m := hmac.New(sha256.New, []byte("tether dashboard session key v1"))
	m.Write([]byte(admin))
	derived := web.SessionConfig{AdminTokens: []string{admin}, Key: m.Sum(nil)}
	req := httptest.NewRequest("GET", "/queues", nil)
	req.Header.Set("Cookie", cookie)
	rec := httptest.NewRecorder()
	web.RequireSession(derived)(http.NotFoundHandler()).ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Errorf("the cookie verifies under the key derived from the tokens: %d", rec.Code)
	}
	if out := srv.output(); !strings.Contains(out, "set --session-key") {
		t.Errorf("no warning about the random session key:\n%s", out)
	}
}

// TestEventStreamOutlivesBodyDeadline: the dashboard's event stream lifts
// the body deadline, which would otherwise end it (a passed read deadline
// cancels the request): two change events, a poll interval (1 s) apart,
// arrive on a server whose deadline is 50 ms.
func TestEventStreamOutlivesBodyDeadline(t *testing.T) {
	t.Parallel()
	srv := serveInProcess(t, "--body-timeout", "50ms")
	conn, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /events HTTP/1.1\r\nHost: "+srv.addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	stream := bufio.NewReader(conn)
	resp, err := http.ReadResponse(stream, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/events: %v %v", resp, err)
	}
	// The poller takes its first snapshot after the stream subscribes, at
	// a moment the test cannot see: an enqueue before it is part of the
	// baseline and changes nothing. So each round enqueues again until a
	// change event comes, and the stream must carry two.
	events := make(chan error, 1)
	go func() {
		body := bufio.NewReader(resp.Body)
		for {
			line, err := body.ReadString('\n')
			if err != nil {
				events <- err
				return
			}
			if line == "event: change\n" {
				events <- nil
			}
		}
	}()
	post := "POST /v1/jobs HTTP/1.1\r\nHost: " + srv.addr + "\r\nContent-Length: 12\r\n\r\n{\"kind\":\"k\"}"
	for i := 0; i < 2; {
		if resp := rawExchange(t, srv.addr, post); resp.StatusCode != http.StatusCreated {
			t.Fatalf("enqueue: %d", resp.StatusCode)
		}
		select {
		case err := <-events:
			if err != nil {
				t.Fatalf("the stream ended before change event %d: %v", i+1, err)
			}
			i++
		case <-time.After(3 * time.Second): // three polls: enqueue again
		}
	}
}
