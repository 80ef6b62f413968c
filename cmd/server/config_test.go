package main

import (
	"io"
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
		want string // in the error
	}{
		{[]string{"--max-body", "1GB"}, nil, "invalid size"},
		{[]string{"--max-body", "0"}, nil, "invalid size"},
		{nil, map[string]string{"TETHER_TICK": "soon"}, "TETHER_TICK"},
		{[]string{"--dead-after", "1s", "--heartbeat-interval", "1s"}, nil, "shorter than --dead-after"},
		{[]string{"--tick", "0s"}, nil, "--tick must be positive"},
		{[]string{"--max-rescues", "0"}, nil, "--max-rescues"},
		{[]string{"extra"}, nil, "unexpected argument"},
		{[]string{"--nope"}, nil, "flag provided but not defined"},
	}
	for _, tt := range tests {
		_, err := parseConfig(tt.args, env(tt.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q, %v) = %v, want an error with %q", tt.args, tt.env, err, tt.want)
		}
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
		st, err := openStore(t.Context(), url)
		if err != nil {
			t.Fatalf("openStore(%q) = %v", url, err)
		}
		st.Close()
	}
	tests := []struct{ url, want string }{
		{"postgres://tether:s3cret@127.0.0.1:1/tether?connect_timeout=1", "open store postgres://tether:xxxxx@"},
		{"redis://:s3cret@127.0.0.1:1/0", "open store redis://:xxxxx@"},
		{"mysql://x", "unknown scheme"},
		{"tether.db", "want a URL"},
		{"sqlite:", "no file path"},
	}
	for _, tt := range tests {
		_, err := openStore(t.Context(), tt.url)
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("openStore(%q) error shows the password: %v", tt.url, err)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("openStore(%q) = %v, want an error with %q", tt.url, err, tt.want)
		}
	}
}
