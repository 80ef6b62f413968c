//go:build linux

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// outageProxy stands between the runner and the server: it passes
// requests through, or plays an outage (connections cut, or 503
// unavailable), recording each request it refused.
type outageProxy struct {
	url     string
	mu      sync.Mutex
	mode    outageMode
	refused []refusal
	wake    chan struct{}
}

type outageMode int

const (
	passThrough outageMode = iota
	cutOff                 // the connection is closed unanswered
	unavailable            // 503 unavailable, Retry-After: 1
)

type refusal struct {
	at   time.Time
	path string
	mode outageMode
}

func newOutageProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &outageProxy{wake: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		mode := p.mode
		if mode != passThrough {
			p.refused = append(p.refused, refusal{time.Now(), r.URL.Path, mode})
		}
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
		switch mode {
		case passThrough:
			rp.ServeHTTP(w, r)
		case cutOff:
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		case unavailable:
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"type":"urn:tether:error:unavailable","title":"Unavailable","status":503,"code":"unavailable"}`)
		}
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *outageProxy) set(m outageMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
}

// refusals returns the refused requests whose path ends with suffix.
func (p *outageProxy) refusals(suffix string, mode outageMode) []refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []refusal
	for _, r := range p.refused {
		if strings.HasSuffix(r.path, suffix) && r.mode == mode {
			out = append(out, r)
		}
	}
	return out
}

// await waits until n requests ending with suffix were refused in mode.
func (p *outageProxy) await(t *testing.T, suffix string, mode outageMode, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for len(p.refusals(suffix, mode)) < n {
		select {
		case <-p.wake:
		case <-deadline:
			t.Fatalf("fewer than %d %s refused within 30s", n, suffix)
		}
	}
}

// A job that ends while the server cannot be reached is settled once it
// can: the ack is retried at a jittered pace of 100 ms doubling, through
// cut connections and 503s, never in a hot loop.
func TestWorkServerOutage(t *testing.T) {
	t.Parallel()
	// dead-after well over the outage, so the job stays the runner's.
	_, c := startServer(t, "--dead-after", "30s", "--tick", "200ms")
	px := newOutageProxy(t, c.BaseURL)
	dir := t.TempDir()
	j := enqueueJob(t, c, `{"queue":"outage","kind":"k","payload":{"n":1}}`)
	p := newProbe(t, dir, j.ID)
	proceed := filepath.Join(dir, j.ID+".go")
	if err := syscall.Mkfifo(proceed, 0o600); err != nil {
		t.Fatal(err)
	}
	script := `exec 9>"$PROBE_DIR/$TETHER_JOB_ID"; echo started >&9; read go < "$PROBE_DIR/$TETHER_JOB_ID.go"; cat`
	r := runner(t, px.url, []string{"PROBE_DIR=" + dir}, "--once", "--queue", "outage", "--", "sh", "-c", script)
	p.line(t)

	px.set(cutOff)
	f, err := os.OpenFile(proceed, os.O_WRONLY, 0) // the child is waiting to read it
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "go\n")
	f.Close()
	px.await(t, "/ack", cutOff, 4)
	px.set(unavailable)
	px.await(t, "/ack", unavailable, 1)
	px.set(passThrough)

	if code := r.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0: the ack went through after the outage", code)
	}
	got := getJob(t, c, j.ID)
	if got.State != "succeeded" || string(got.Result) != `{"n":1}` || len(got.Attempts) != 1 {
		t.Errorf("job %s result %s attempts %d; want succeeded in one attempt", got.State, got.Result, len(got.Attempts))
	}
	acks := px.refusals("/ack", cutOff)
	for i, least := range []time.Duration{80, 160, 320} {
		if gap := acks[i+1].at.Sub(acks[i].at); gap < least*time.Millisecond {
			t.Errorf("ack retry %d came %v after the last, want at least %vms", i+1, gap, least)
		}
	}
	px.mu.Lock()
	n := len(px.refused)
	px.mu.Unlock()
	if n > 30 {
		t.Errorf("%d requests during an outage of a few seconds: a hot loop", n)
	}
}
