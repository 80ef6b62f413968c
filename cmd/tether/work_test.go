//go:build unix

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseWork(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TETHER_URL": "http://tether:8080", "TETHER_TOKEN": "tok", "TETHER_WORKER_ID": "w-env"}
	c, err := parseWork([]string{"--queue", "a,b", "--queue", "c", "--kind", "k", "--fatal-exit-codes", "2, 64",
		"--max-result", "512KiB", "--once", "--", "sh", "-c", "cat"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.url != "http://tether:8080" || c.token != "tok" || c.workerID != "w-env" || !slices.Equal(c.queues, []string{"a", "b", "c"}) ||
		!slices.Equal(c.kinds, []string{"k"}) || !c.fatal[2] || !c.fatal[64] || len(c.fatal) != 2 || c.maxResult != 512<<10 ||
		!c.once || c.wait != 30*time.Second || c.snoozeCode != 75 || c.snoozeDelay != 30*time.Second || c.grace != 25*time.Second ||
		c.concurrency != 1 || !slices.Equal(c.cmd, []string{"sh", "-c", "cat"}) {
		t.Errorf("config = %+v", c)
	}
	d, err := parseWork([]string{"--url", "http://flag", "true"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil || d.url != "http://flag" || !slices.Equal(d.queues, []string{"default"}) || d.maxResult != 1<<20 {
		t.Errorf("a flag over its variable, defaults: %+v, %v", d, err)
	}
	var help bytes.Buffer
	if _, err := parseWork([]string{"--help"}, func(k string) string { return env[k] + "-s3cret" }, &help); err == nil ||
		strings.Contains(help.String(), "s3cret") || !strings.Contains(help.String(), "usage: tether work") {
		t.Errorf("--help: %v\n%s\nwant the usage, without the variables' values", err, help.String())
	}
	for _, args := range [][]string{
		{}, {"--"}, {"--concurrency", "0", "true"}, {"--concurrency", "1001", "true"}, {"--snooze-exit-code", "0", "true"},
		{"--fatal-exit-codes", "75", "true"}, {"--fatal-exit-codes", "0", "true"}, {"--fatal-exit-codes", "x", "true"},
		{"--grace", "0s", "true"}, {"--max-result", "0", "true"}, {"--max-result", "1GB", "true"}, {"--wait", "-1s", "true"},
		{"--nope", "true"},
	} {
		if _, err := parseWork(args, func(string) string { return "" }, &bytes.Buffer{}); err == nil {
			t.Errorf("parseWork(%q) accepted", args)
		}
	}
}

func TestResultOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ out, want string }{
		{"", ""},
		{" \n", ""},
		{`{"a": 1}` + "\n", `{"a": 1}`},
		{"42\n", "42"},
		{"hello\n", `"hello"`},
		{"two\nlines\n", `"two\nlines"`},
		{"crlf\r\n", `"crlf"`},
		{"<b>\xff", `"\u003cb\u003e\ufffd"`},
	} {
		if got := string(resultOf([]byte(tt.out))); got != tt.want {
			t.Errorf("resultOf(%q) = %s, want %s", tt.out, got, tt.want)
		}
	}
}

func TestStderrTail(t *testing.T) {
	t.Parallel()
	var short stderrTail
	short.Write([]byte("a\nb\n"))
	if got := short.String(); got != "a\nb" {
		t.Errorf("short tail = %q", got)
	}
	var long stderrTail
	for i := range 1000 {
		long.Write([]byte(strings.Repeat("x", i%50) + "\n"))
	}
	long.Write([]byte("last line"))
	got := long.String()
	if len(got) > tailBytes || !strings.HasSuffix(got, "\nlast line") || strings.HasPrefix(got, "\n") {
		t.Errorf("long tail: %d bytes, ends %q", len(got), got[max(len(got)-20, 0):])
	}
	if first, _, _ := strings.Cut(got, "\n"); first != strings.Repeat("x", len(first)) {
		t.Errorf("the tail starts mid-line: %q", first)
	}
}

func TestParseExit(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]childExit{
		"exit 0\n": {}, "exit 3\n": {code: 3}, "signal 9\n": {signal: 9},
		"error fork/exec /x: permission denied\n": {err: "fork/exec /x: permission denied"},
	} {
		if got, ok := parseExit(line); !ok || got != want {
			t.Errorf("parseExit(%q) = %+v, %v; want %+v", line, got, ok, want)
		}
	}
	for _, line := range []string{"", "exit", "exit x", "bogus 1"} {
		if _, ok := parseExit(line); ok {
			t.Errorf("parseExit(%q) accepted", line)
		}
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{"1": 1, "1048576": 1 << 20, "512KiB": 512 << 10, "1MiB": 1 << 20, "16MiB": 16 << 20} {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "-1", "1MB", "1 GiB", "99999999999MiB"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) accepted", s)
		}
	}
}
