package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store/storetest"
)

// TestStoreDownProcess: the real binary over a redis-server that dies
// answers 503 unavailable with Retry-After (readiness and the API alike),
// logs go-redis's own complaints through its log rather than raw on
// stderr, and works again once redis-server is back.
func TestStoreDownProcess(t *testing.T) {
	t.Parallel()
	srv := storetest.StartRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	p := startProcess(t, "", "--addr", "127.0.0.1:0", "--store", srv.URL(), "--node-id", "test-node")
	enqueue := func() *http.Response {
		t.Helper()
		resp, err := http.Post(p.url+"/v1/jobs", "application/json", strings.NewReader(`{"kind":"k"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := enqueue(); resp.StatusCode != http.StatusCreated {
		t.Fatalf("enqueue before the outage: %d", resp.StatusCode)
	}

	srv.Kill9()
	for _, f := range []func() *http.Response{
		func() *http.Response {
			resp, err := http.Get(p.url + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		},
		enqueue,
	} {
		resp := f()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" ||
			resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s with redis-server down: %d, Retry-After %q, %s", resp.Request.URL.Path, resp.StatusCode,
				resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"))
		}
	}

	srv.Start()
	deadline := time.Now().Add(15 * time.Second)
	for resp := enqueue(); resp.StatusCode != http.StatusCreated; resp = enqueue() {
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("enqueue after redis-server came back: %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond) // polling a server coming back: no signal to wait on
	}
	out := p.output()
	if !regexp.MustCompile(`level=WARN msg="[^"]*dial[^"]*" component=store driver=go-redis`).MatchString(out) {
		t.Errorf("go-redis's dial failures are not in the server's log:\n%s", out)
	}
	if regexp.MustCompile(`(?m)^redis: \d{4}/`).MatchString(out) {
		t.Errorf("go-redis logged on its own, past the server's log:\n%s", out)
	}
	if !strings.Contains(out, `msg="store unavailable"`) {
		t.Errorf("the 503s are not in the log:\n%s", out)
	}
}

// TestMigrationsLogged: the migrations a SQLite store applies at start
// are in the server's log, as the server's lines are.
func TestMigrationsLogged(t *testing.T) {
	t.Parallel()
	p := startServer(t, filepath.Join(t.TempDir(), "t.db"))
	if out := p.output(); !regexp.MustCompile(`level=INFO msg="[^"]*migrat[^"]*" component=store logger=goose`).MatchString(out) {
		t.Errorf("no migration line in the server's log:\n%s", out)
	}
}
