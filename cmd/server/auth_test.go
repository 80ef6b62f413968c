package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/api/webhook"
)

func TestExposed(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": false, "127.0.0.2:0": false, "[::1]:8080": false, "localhost:8080": false,
		":8080": true, "0.0.0.0:8080": true, "[::]:8080": true, "10.0.0.5:8080": true,
		"tether.example:8080": true, "no-port": true,
	} {
		if got := exposed(addr); got != want {
			t.Errorf("exposed(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestSecurityConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	hooks := filepath.Join(dir, "hooks.json")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(tokens, "# ops\nadm-secret:admin\nprod-secret:producer,work-secret:worker\n")
	write(hooks, `{"hooks":[{"name":"gh","kind":"github.event","scheme":"github","secrets":["s"]}]}`)

	c, err := parseConfig([]string{"--addr", "0.0.0.0:8080", "--hooks", hooks}, env(map[string]string{"TETHER_TOKENS_FILE": tokens}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.tokenList) != 3 || c.tokenList[0].Role != api.RoleAdmin || len(c.hooks) != 1 || c.hooks[0].Scheme != webhook.SchemeGitHub {
		t.Errorf("tokens %d, hooks %+v", len(c.tokenList), c.hooks)
	}
	limits := c.rateLimits()
	if limits[api.RoleWorker].PerSecond != defaultRateLimit || limits[api.RoleAdmin].PerSecond != 0 || c.maxPolls != api.DefaultMaxPollsPerWorker ||
		c.maxConnsPerIP != api.DefaultMaxConnsPerClient || c.maxTokenPolls != api.DefaultMaxPollsPerToken {
		t.Errorf("limits %+v, max polls %d, max conns %d", limits, c.maxPolls, c.maxConnsPerIP)
	}

	c, err = parseConfig([]string{"--rate-limit", "5", "--rate-limit-admin", "50", "--rate-burst", "7"},
		env(map[string]string{"TETHER_TOKENS": "a:admin"}), io.Discard)
	if err != nil || c.rateLimits()[api.RoleProducer] != (api.RateLimit{PerSecond: 5, Burst: 7}) ||
		c.rateLimits()[api.RoleAdmin].PerSecond != 50 || len(c.tokenList) != 1 {
		t.Errorf("config %+v, %v", c.security, err)
	}

	badHooks := filepath.Join(dir, "bad.json")
	write(badHooks, `{"hooks":[{"name":"gh","kind":"k","scheme":"github","secret":"s"}]}`)
	tests := []struct {
		args []string
		env  map[string]string
		want string // in the error
	}{
		{[]string{"--addr", "0.0.0.0:8080"}, nil, "refusing to listen on 0.0.0.0:8080 without tokens"},
		{[]string{"--addr", ":8080"}, nil, "--insecure-no-auth"},
		{[]string{"--tokens", "a:admin", "--tokens-file", tokens}, nil, "not both"},
		{[]string{"--tokens", "a:root"}, nil, "role must be"},
		{[]string{"--tokens-file", filepath.Join(dir, "missing")}, nil, "--tokens-file"},
		{[]string{"--hooks", badHooks}, nil, `unknown field "secret"`},
		{[]string{"--hooks", filepath.Join(dir, "missing.json")}, nil, "hooks file"},
		{[]string{"--session-key", "short"}, nil, "--session-key"},
		{[]string{"--rate-burst", "0"}, nil, "--rate-burst"},
		{[]string{"--max-polls-per-worker", "0"}, nil, "--max-polls-per-worker"},
		{[]string{"--max-conns-per-ip", "-1"}, nil, "--max-conns-per-ip"},
		{[]string{"--max-polls-per-token", "0"}, nil, "--max-polls-per-token"},
		{[]string{"--auth-failures", "-1"}, nil, "--auth-failures"},
		{[]string{"--auth-failure-window", "0s"}, nil, "--auth-failure-window"},
	}
	for _, tt := range tests {
		_, err := parseConfig(tt.args, env(tt.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) = %v, want an error with %q", tt.args, err, tt.want)
		}
	}
	if _, err := parseConfig([]string{"--addr", "0.0.0.0:8080", "--insecure-no-auth"}, env(nil), io.Discard); err != nil {
		t.Errorf("--insecure-no-auth: %v", err)
	}
	if _, err := parseConfig([]string{"--tokens", "a:admin,b:wizard"}, env(nil), io.Discard); err == nil ||
		strings.Contains(err.Error(), "a:admin") {
		t.Errorf("a token error quoted a secret: %v", err)
	}
}

// TestRefusesOpenNonLoopback: the binary will not serve 0.0.0.0 without
// tokens, and says why; it never listens.
func TestRefusesOpenNonLoopback(t *testing.T) {
	t.Parallel()
	out, err := runBinary(t, "--addr", "0.0.0.0:0", "--store", "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
	if err == nil || !strings.Contains(out, "refusing to listen on 0.0.0.0:0 without tokens") || strings.Contains(out, "tether listening") {
		t.Errorf("exit %v, output:\n%s", err, out)
	}
}

// TestTokensEndToEnd runs the binary with the three roles of the issue.
func TestTokensEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks.json")
	if err := os.WriteFile(hooks, []byte(`{"hooks":[{"name":"gh","queue":"gh","kind":"github.event","scheme":"github","secrets":["hook-secret"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, filepath.Join(dir, "t.db"), "--tokens", "adm:admin,prod:producer,work:worker", "--hooks", hooks)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := func(method, path, token, body string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, srv.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, tt := range []struct {
		method, path, token, body string
		status                    int
	}{
		{"GET", "/healthz", "", "", 200},
		{"POST", "/v1/jobs", "", `{"kind":"k"}`, 401},
		{"POST", "/v1/jobs", "prod", `{"kind":"k","queue":"q"}`, 201},
		{"POST", "/v1/lease", "prod", `{"worker_id":"w","queues":["q"]}`, 403},
		{"POST", "/v1/lease", "work", `{"worker_id":"w","queues":["q"]}`, 200},
		{"POST", "/v1/queues/q/pause", "work", "", 403},
		{"POST", "/v1/queues/q/pause", "adm", "", 200},
		{"GET", "/metrics", "", "", 401},
		{"GET", "/", "adm", "", 303},
	} {
		if resp := call(tt.method, tt.path, tt.token, tt.body); resp.StatusCode != tt.status {
			t.Errorf("%s %s as %q: %d, want %d", tt.method, tt.path, tt.token, resp.StatusCode, tt.status)
		}
	}
	if resp := call("GET", "/", "", ""); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Errorf("dashboard without a session: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp := call("POST", "/login", "", "token=adm", "Content-Type", "application/x-www-form-urlencoded", "Origin", srv.url)
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "tether_session" {
			session = c
		}
	}
	if resp.StatusCode != 303 || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d, cookie %+v", resp.StatusCode, session)
	}
	cookie := []string{"Cookie", "tether_session=" + session.Value}
	if resp := call("GET", "/", "", "", cookie...); resp.StatusCode == 303 {
		t.Errorf("dashboard with a session redirected to %q", resp.Header.Get("Location"))
	}
	if resp := call("GET", "/v1/queues", "", "", cookie...); resp.StatusCode != 401 {
		t.Errorf("the API took the dashboard cookie: %d", resp.StatusCode)
	}

	body := `{"zen":"Design for failure."}`
	sig := webhook.SignGitHub([]byte("hook-secret"), []byte(body))
	first := call("POST", "/v1/hooks/gh", "", body, "X-GitHub-Delivery", "d-1", "X-GitHub-Event", "ping", "X-Hub-Signature-256", sig)
	again := call("POST", "/v1/hooks/gh", "", body, "X-GitHub-Delivery", "d-1", "X-GitHub-Event", "ping", "X-Hub-Signature-256", sig)
	forged := call("POST", "/v1/hooks/gh", "", body+" ", "X-GitHub-Delivery", "d-2", "X-Hub-Signature-256", sig)
	if first.StatusCode != 202 || again.StatusCode != 200 || forged.StatusCode != 401 {
		t.Errorf("hook: first %d, again %d, forged %d", first.StatusCode, again.StatusCode, forged.StatusCode)
	}
	if out := srv.output(); strings.Contains(out, "adm:admin") || strings.Contains(out, "hook-secret") {
		t.Errorf("a secret reached the log:\n%s", out)
	}
}

// runBinary runs the server binary to its exit (within 30 s) and returns
// what it printed.
func runBinary(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, serverBin, args...).CombinedOutput()
	return string(out), err
}
