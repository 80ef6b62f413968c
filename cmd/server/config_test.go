package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseConfigPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func(c config) bool
	}{
		{"defaults", nil, nil, func(c config) bool {
			return c.addr == "127.0.0.1:8080" && c.store == "sqlite:tether.db" &&
				c.deadAfter == 15*time.Second && c.heartbeatInterval == 5*time.Second &&
				c.tick == time.Second && c.maxBody == 1<<20 && c.maxRescues == 5 &&
				c.retentionSucceeded == 24*time.Hour && c.retentionDead == 720*time.Hour && c.nodeID != ""
		}},
		{"env over default", nil, map[string]string{"TETHER_DEAD_AFTER": "2s", "TETHER_MAX_BODY": "64KiB", "TETHER_NODE_ID": "n1"},
			func(c config) bool { return c.deadAfter == 2*time.Second && c.maxBody == 64<<10 && c.nodeID == "n1" }},
		{"flag over env", []string{"--dead-after", "3s", "--tick=200ms"}, map[string]string{"TETHER_DEAD_AFTER": "2s", "TETHER_TICK": "5s"},
			func(c config) bool {
				return c.deadAfter == 3*time.Second && c.tick == 200*time.Millisecond && c.heartbeatInterval == time.Second
			}},
		{"heartbeat given", []string{"--heartbeat-interval", "2s"}, nil,
			func(c config) bool { return c.heartbeatInterval == 2*time.Second && c.deadAfter == 15*time.Second }},
		{"empty env is unset", nil, map[string]string{"TETHER_ADDR": ""},
			func(c config) bool { return c.addr == "127.0.0.1:8080" }},
		{"sizes in bytes", []string{"--max-body", "1000"}, nil,
			func(c config) bool { return c.maxBody == 1000 }},
		{"sizes in MiB", []string{"--max-body", "2MiB"}, nil,
			func(c config) bool { return c.maxBody == 2<<20 }},
		{"tick at half of dead-after", []string{"--dead-after", "2s", "--tick", "1s"}, nil,
			func(c config) bool { return c.tick == time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := parseConfig(tt.args, env(tt.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(c) {
				t.Errorf("config = %+v", c)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		env  map[string]string
		want []string // each in the error
	}{
		{[]string{"--max-body", "1GB"}, nil, []string{"-max-body", "invalid size"}},
		{[]string{"--max-body", "0"}, nil, []string{"-max-body", "invalid size"}},
		{[]string{"--tick", "soon"}, nil, []string{"-tick", "want a duration"}},
		{[]string{"--max-rescues", "many"}, nil, []string{"-max-rescues", "want a whole number"}},
		{[]string{"--rate-limit", "fast"}, nil, []string{"-rate-limit", "want a number"}},
		{[]string{"--insecure-no-auth=maybe"}, nil, []string{"-insecure-no-auth"}},
		{nil, map[string]string{"TETHER_TICK": "soon"}, []string{"TETHER_TICK", "--tick", "want a duration"}},
		{nil, map[string]string{"TETHER_MAX_BODY": "huge"}, []string{"TETHER_MAX_BODY", "--max-body", "invalid size"}},
		{nil, map[string]string{"TETHER_INSECURE_NO_AUTH": "maybe"}, []string{"TETHER_INSECURE_NO_AUTH", "--insecure-no-auth"}},
		{[]string{"--dead-after", "1s", "--heartbeat-interval", "1s"}, nil, []string{"shorter than --dead-after"}},
		{[]string{"--tick", "0s"}, nil, []string{"--tick must be positive"}},
		// The tick rule: at most half of --dead-after, from flags or variables.
		{[]string{"--dead-after", "2s", "--tick", "1001ms"}, nil, []string{"--tick (1.001s) must be at most half of --dead-after (2s)"}},
		{[]string{"--tick", "8s"}, nil, []string{"--tick (8s)", "--dead-after (15s)"}},
		{nil, map[string]string{"TETHER_DEAD_AFTER": "1s", "TETHER_TICK": "1s"}, []string{"--tick (1s) must be at most half"}},
		{[]string{"--max-rescues", "0"}, nil, []string{"--max-rescues"}},
		{[]string{"--tokens", "a:wizard"}, nil, []string{"--tokens: ", "wizard"}},
		{nil, map[string]string{"TETHER_TOKENS": "a:wizard"}, []string{"--tokens: "}},
		{[]string{"--hooks", "/nonexistent/hooks.json"}, nil, []string{"--hooks: "}},
		{[]string{"extra"}, nil, []string{"unexpected argument", "--help"}},
		{[]string{"--nope"}, nil, []string{"flag provided but not defined: -nope", "--help"}},
	}
	for _, tt := range tests {
		_, err := parseConfig(tt.args, env(tt.env), io.Discard)
		for _, want := range tt.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("parseConfig(%q, %v) = %v, want an error with %q", tt.args, tt.env, err, want)
			}
		}
	}
}

// TestHelp: --help says what the server is, every store URL form, and
// every flag with its variable; it is not an error to main (exit 0), and
// a parse error does not print it.
func TestHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := parseConfig([]string{"--help"}, env(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseConfig(--help) = %v, want flag.ErrHelp", err)
	}
	help := out.String()
	wants := []string{"job-queue server", "sqlite:PATH", "sqlite://PATH", "postgres://", "redis://", "rediss://", "TETHER_STORE"}
	(&config{}).flagSet().VisitAll(func(f *flag.Flag) {
		wants = append(wants, "--"+f.Name+" ", "["+envName(f.Name)+"]")
	})
	for _, want := range wants {
		if !strings.Contains(help, want) {
			t.Errorf("--help does not say %q:\n%s", want, help)
		}
	}
	out.Reset()
	if _, err := parseConfig([]string{"--tick", "soon"}, env(nil), &out); err == nil || out.Len() > 0 {
		t.Errorf("a bad flag: err %v, printed %q; want an error and nothing printed", err, out.String())
	}
}

// TestBinaryFlags: the binary exits 0 on --help with the help on stdout,
// and 1 on a bad variable, saying so once on stderr without the help.
func TestBinaryFlags(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, serverBin, "--help")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), "rediss://") || stderr.Len() > 0 {
		t.Errorf("--help: exit %v, stdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	cmd = exec.CommandContext(ctx, serverBin, "--store", "sqlite:"+t.TempDir()+"/t.db")
	cmd.Env = append(os.Environ(), "TETHER_TICK=soon")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	want := "tether: TETHER_TICK=\"soon\" (--tick): want a duration such as 500ms, 15s or 1h\n"
	if code := exitCode(err); code != 1 || stderr.String() != want || stdout.Len() > 0 {
		t.Errorf("TETHER_TICK=soon: exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", code, stdout.String(), stderr.String(), want)
	}
}

// exitCode is a finished command's exit status, -1 if it did not exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

func TestByteSizeString(t *testing.T) {
	t.Parallel()
	for v, want := range map[byteSize]string{1 << 20: "1MiB", 3 << 10: "3KiB", 1000: "1000"} {
		if got := v.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(v), got, want)
		}
	}
}

func TestOpenStoreSchemes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, url := range []string{"sqlite:" + dir + "/a.db", "sqlite://" + dir + "/b.db"} {
		st, err := openStore(t.Context(), url, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("openStore(%q) = %v", url, err)
		}
		st.Close()
	}
	tests := []struct{ url, want string }{
		{"postgres://tether:s3cret@127.0.0.1:1/tether?connect_timeout=1", "--store postgres://tether:xxxxx@"},
		{"postgres://tether:s3cret@127.0.0.1:notaport/tether", "--store postgres://tether:xxxxx@"},
		{"redis://:s3cret@127.0.0.1:1/0", "--store redis://:xxxxx@"},
		{"redis://127.0.0.1:6379/notadb", "--store redis://127.0.0.1:6379/notadb"},
		{"mysql://u:s3cret@x", "--store \"mysql://u:xxxxx@x\": unknown scheme"},
		{"tether.db", "--store \"tether.db\": want a URL"},
		{"sqlite:", "--store \"sqlite:\": no file path"},
	}
	for _, tt := range tests {
		_, err := openStore(t.Context(), tt.url, slog.New(slog.DiscardHandler))
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("openStore(%q) error shows the password: %v", tt.url, err)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("openStore(%q) = %v, want an error with %q", tt.url, err, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://tether:s3cret@db:5432/tether", "postgres://tether:xxxxx@db:5432/tether"},
		{"postgres://tether:s3cret@db:notaport/tether", "postgres://tether:xxxxx@db:notaport/tether"}, // net/url refuses it
		{"postgres://tether:p@ss@db/tether", "postgres://tether:xxxxx@db/tether"},                     // '@' in the password
		{"postgres://db/tether?user=t&password=s3cret&sslmode=disable", "postgres://db/tether?user=t&password=xxxxx&sslmode=disable"},
		{"host=db password=s3cret dbname=tether", "host=db password=xxxxx dbname=tether"},
		{"redis://:s3cret@127.0.0.1:6379/0", "redis://:xxxxx@127.0.0.1:6379/0"},
		{"redis://127.0.0.1:6379/0?prefix=a@b", "redis://127.0.0.1:6379/0?prefix=a@b"}, // no userinfo
		{"redis://user@127.0.0.1:6379/0", "redis://user@127.0.0.1:6379/0"},
		{"sqlite:tether.db", "sqlite:tether.db"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// --schedules (or TETHER_SCHEDULES) reads the file at start; a file the
// API would refuse stops the server, naming the entry's field.
func TestSchedulesFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, bad := dir+"/good.json", dir+"/bad.json"
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(good, `{"schedules": [{"name": "tick", "every_ms": 1000, "job": {"kind": "k"}}]}`)
	write(bad, `{"schedules": [{"name": "tick", "every_ms": 1000, "job": {"kind": "k", "prio": 1}}]}`)
	c, err := parseConfig(nil, env(map[string]string{"TETHER_SCHEDULES": good}), io.Discard)
	if err != nil || c.schedulesFile != good || len(c.schedules) != 1 || c.schedules[0].Name != "tick" {
		t.Errorf("TETHER_SCHEDULES: %+v, %v", c.schedules, err)
	}
	for path, want := range map[string]string{
		bad:                "--schedules " + bad + ": schedules[0].job.prio",
		dir + "/none.json": "--schedules: open",
	} {
		if _, err := parseConfig([]string{"--schedules", path}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--schedules %s: %v, want an error with %q", path, err, want)
		}
	}
}

// The README's schedules-file example is a file the server accepts.
func TestReadmeSchedulesFile(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json\n(\\{\"schedules\".*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README has no schedules file example")
	}
	path := filepath.Join(t.TempDir(), "schedules.json")
	if err := os.WriteFile(path, m[1], 0o600); err != nil {
		t.Fatal(err)
	}
	specs, err := loadSchedules(path)
	if err != nil || len(specs) != 2 {
		t.Errorf("README's schedules file: %d specs, %v", len(specs), err)
	}
}
