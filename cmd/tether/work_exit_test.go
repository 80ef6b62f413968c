//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tether work --queue q -- sh -c 'cat' acks every job with its payload as
// its result, running two at once, and exits 0 on SIGTERM.
func TestWorkCat(t *testing.T) {
	t.Parallel()
	_, c := startServer(t)
	payloads := []string{`{"a":[1,2]}`, `"text"`, `null`, `7`}
	var ids []string
	for _, p := range payloads {
		ids = append(ids, enqueueJob(t, c, `{"queue":"cat","kind":"echo","payload":`+p+`}`).ID)
	}
	r := runner(t, c.BaseURL, nil, "--queue", "cat", "--concurrency", "2", "--", "sh", "-c", "cat")
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(r.output(), `msg="job acked"`) < len(ids) {
		if time.Now().After(deadline) {
			t.Fatalf("not every job acked within 30s:\n%s", r.output())
		}
		time.Sleep(20 * time.Millisecond) // polling an outside process's output: no signal to wait on
	}
	r.signal(t, 15)
	if code := r.exit(t, 30*time.Second); code != 0 {
		t.Errorf("tether work exited %d after SIGTERM, want 0", code)
	}
	for i, id := range ids {
		j := getJob(t, c, id)
		if j.State != "succeeded" || string(j.Result) != payloads[i] {
			t.Errorf("job %d: %s with result %s, want succeeded with %s", i, j.State, j.Result, payloads[i])
		}
	}
}

// Each way a child ends maps to its job's end, as docs/workers.md says;
// --once exits 0 when the job was acked, 1 otherwise.
func TestWorkExits(t *testing.T) {
	t.Parallel()
	_, c := startServer(t)
	tests := []struct {
		name    string
		flags   []string
		script  string
		code    int    // tether work --once's exit code
		state   string // the job's state after
		attempt int
		result  string // the job's result, when acked
		lastErr string // its last_error, exactly
		reason  string // its dead_reason
		log     string // in the runner's output
	}{
		{name: "json", script: `echo '{"ok": true}'`, state: "succeeded", attempt: 1, result: `{"ok":true}`},
		{name: "text", script: `echo hello`, state: "succeeded", attempt: 1, result: `"hello"`},
		{name: "empty", script: `true`, state: "succeeded", attempt: 1, result: `null`},
		{name: "exit-3", script: `echo first >&2; echo oops >&2; exit 3`, code: 1, state: "scheduled", attempt: 1,
			lastErr: "exit status 3\nfirst\noops", log: ": oops\n"},
		{name: "fatal", flags: []string{"--fatal-exit-codes", "4,5"}, script: `exit 5`, code: 1, state: "dead", attempt: 1,
			lastErr: "exit status 5", reason: "failed_permanently"},
		{name: "snooze", flags: []string{"--snooze-delay", "1h"}, script: `exit 75`, code: 1, state: "scheduled", attempt: 0},
		{name: "signal", script: `echo bye >&2; kill -KILL $$`, code: 1, state: "scheduled", attempt: 1,
			lastErr: "killed by signal 9 (killed)\nbye"},
		{name: "max-result", flags: []string{"--max-result", "10"}, script: `echo 0123456789abc`, code: 1, state: "dead",
			attempt: 1, lastErr: "stdout is over --max-result (10 bytes)", reason: "failed_permanently"},
		{name: "progress", script: `echo '{"progress": 40}' >&3; echo '{"extend_ms": 60000}' >&3; echo junk >&3; cat`,
			state: "succeeded", attempt: 1, result: `{"n":1}`, log: `msg="ignored a control line"`},
		{name: "long-control-line", script: `head -c 5000 /dev/zero | tr '\0' x >&3; echo >&3; echo '{"progress": 7}' >&3`,
			state: "succeeded", attempt: 1, log: `msg="ignored a control line over 4 KiB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := enqueueJob(t, c, `{"queue":"`+tt.name+`","kind":"k","payload":{"n":1},"max_attempts":3}`).ID
			args := append(append([]string{"--once", "--wait", "20s", "--queue", tt.name}, tt.flags...), "--", "sh", "-c", tt.script)
			r := runner(t, c.BaseURL, nil, args...)
			if code := r.exit(t, 60*time.Second); code != tt.code {
				t.Errorf("exit code %d, want %d:\n%s", code, tt.code, r.output())
			}
			j := getJob(t, c, id)
			if j.State != tt.state || j.Attempt != tt.attempt {
				t.Errorf("job %s attempt %d, want %s attempt %d", j.State, j.Attempt, tt.state, tt.attempt)
			}
			if tt.result != "" && string(j.Result) != tt.result {
				t.Errorf("result %s, want %s", j.Result, tt.result)
			}
			if tt.lastErr != "" && deref(j.LastError) != tt.lastErr {
				t.Errorf("last_error %q, want %q", deref(j.LastError), tt.lastErr)
			}
			if tt.reason != "" && deref(j.DeadReason) != tt.reason {
				t.Errorf("dead_reason %s, want %s", deref(j.DeadReason), tt.reason)
			}
			if tt.log != "" && !strings.Contains(r.output(), tt.log) {
				t.Errorf("the runner's output lacks %q:\n%s", tt.log, r.output())
			}
			switch tt.name {
			case "exit-3":
				if !strings.Contains(r.output(), id+": oops\n") {
					t.Errorf("stderr not passed through with the job id:\n%s", r.output())
				}
			case "snooze":
				if !j.RunAt.After(time.Now().Add(50*time.Minute)) || j.Attempts[0].Outcome != "released" {
					t.Errorf("snoozed job: run_at %v, attempt %s; want released for an hour", j.RunAt, j.Attempts[0].Outcome)
				}
			case "progress", "long-control-line":
				if want := map[string]int{"progress": 40, "long-control-line": 7}[tt.name]; j.Progress == nil || *j.Progress != want {
					t.Errorf("progress %v, want %d", j.Progress, want)
				}
			}
		})
	}
}

// --once with no job exits 3; a token the server refuses exits 1 saying so.
func TestWorkOnceNoneAndRefused(t *testing.T) {
	t.Parallel()
	_, c := startServer(t, "--tokens", "s3cret-worker-token:worker,s3cret-producer-tkn:producer")
	for _, tt := range []struct {
		token string
		code  int
		say   string
	}{
		{"s3cret-worker-token", 3, "no job within 200ms"},
		{"wrong-token-0123456", 1, "the server refused the token (401 unauthorized)"},
		{"s3cret-producer-tkn", 1, "the token may not lease jobs (403 forbidden)"},
	} {
		r := runner(t, c.BaseURL, []string{"TETHER_TOKEN=" + tt.token}, "--once", "--wait", "200ms", "--", "true")
		if code := r.exit(t, 30*time.Second); code != tt.code || !strings.Contains(r.output(), tt.say) {
			t.Errorf("token %s: exit %d, want %d saying %q:\n%s", tt.token, code, tt.code, tt.say, r.output())
		}
	}
}

// The child gets the job in its environment and in a private job file
// without the lease token, never the runner's token; the file is gone
// after the job.
func TestWorkEnvironment(t *testing.T) {
	t.Parallel()
	_, c := startServer(t)
	j := enqueueJob(t, c, `{"queue":"env","kind":"report","payload":{"x":1},"max_attempts":7}`)
	script := `env | grep -E '^(TETHER_|TRACE)' | sort; echo "mode=$(stat -c %a "$TETHER_JOB_FILE")"; cat "$TETHER_JOB_FILE"`
	env := []string{"TETHER_TOKEN=s3cret-runner-token", "TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	r := runner(t, c.BaseURL, env, "--once", "--queue", "env", "--", "sh", "-c", script)
	if code := r.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, r.output())
	}
	var out string
	if err := json.Unmarshal(getJob(t, c, j.ID).Result, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	var file string
	vars := map[string]string{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, "="); ok && (strings.HasPrefix(k, "TETHER_") || strings.HasPrefix(k, "TRACE")) {
			vars[k] = v
		}
	}
	want := map[string]string{
		"TETHER_URL": c.BaseURL, "TETHER_JOB_ID": j.ID, "TETHER_JOB_KIND": "report", "TETHER_QUEUE": "env",
		"TETHER_ATTEMPT": "1", "TETHER_MAX_ATTEMPTS": "7",
	}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("%s=%q, want %q", k, vars[k], v)
		}
	}
	file = vars["TETHER_JOB_FILE"]
	for _, k := range []string{"TETHER_TOKEN", "TRACEPARENT", "TRACESTATE"} {
		if _, ok := vars[k]; ok {
			t.Errorf("the child got %s (the runner's, not the job's)", k)
		}
	}
	if !strings.Contains(out, "mode=600\n") {
		t.Errorf("the job file is not private (0600):\n%s", out)
	}
	var written struct {
		ID      string          `json:"id"`
		Payload json.RawMessage `json:"payload"`
		Attempt int             `json:"attempt"`
		Lease   map[string]any  `json:"lease"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &written); err != nil {
		t.Fatalf("the job file is not the job's JSON: %v\n%s", err, out)
	}
	if written.ID != j.ID || string(written.Payload) != `{"x":1}` || written.Attempt != 1 || written.Lease["worker_id"] == nil {
		t.Errorf("job file = %+v", written)
	}
	if _, ok := written.Lease["token"]; ok || strings.Contains(out, "s3cret") {
		t.Errorf("a token reached the child:\n%s", out)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the job file %s outlived the job: %v", file, err)
	}
}

// A job enqueued with a traceparent header gives its child TRACEPARENT
// and TRACESTATE with the same trace, and reads back the same trace.
func TestWorkTraceparent(t *testing.T) {
	t.Parallel()
	_, c := startServer(t)
	const tp, ts = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=value"
	j := enqueueJob(t, c, `{"queue":"trace","kind":"k"}`, "traceparent", tp, "tracestate", ts)
	r := runner(t, c.BaseURL, nil, "--once", "--queue", "trace", "--", "sh", "-c", `echo "$TRACEPARENT $TRACESTATE"`)
	if code := r.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, r.output())
	}
	got := getJob(t, c, j.ID)
	if want := fmt.Sprintf("%q", tp+" "+ts); string(got.Result) != want {
		t.Errorf("the child saw %s, want %s", got.Result, want)
	}
	if got.Trace == nil || got.Trace.Traceparent != tp || got.Trace.Tracestate != ts {
		t.Errorf("the job's trace = %+v, want %s %s", got.Trace, tp, ts)
	}
}

// The runner's own failures: a command not found stops it at start; a
// command that cannot be run, or a job file that cannot be written, fails
// the job saying why; a process that escaped the child's group (setsid)
// holding stdout does not hold the job beyond ioDrain.
func TestWorkFailurePaths(t *testing.T) {
	t.Parallel()
	_, c := startServer(t)
	r := runner(t, c.BaseURL, nil, "--once", "--", "no-such-command-for-tether")
	if code := r.exit(t, 30*time.Second); code != 1 || !strings.Contains(r.output(), "executable file not found") {
		t.Errorf("a command not on PATH: exit %d, want 1 saying so:\n%s", code, r.output())
	}

	t.Run("not-runnable", func(t *testing.T) {
		t.Parallel()
		script := filepath.Join(t.TempDir(), "job.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\ncat\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		r := runner(t, c.BaseURL, nil, "--once", "--queue", "gone", "--", script)
		waitOutput(t, r, `msg="worker registered"`, 1) // past the runner's look at the command
		if err := os.Chmod(script, 0o600); err != nil {
			t.Fatal(err)
		}
		j := enqueueJob(t, c, `{"queue":"gone","kind":"k"}`)
		if code := r.exit(t, 30*time.Second); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if got := getJob(t, c, j.ID); got.State != "scheduled" || !strings.Contains(deref(got.LastError), "permission denied") {
			t.Errorf("job %s, last_error %q; want failed, permission denied", got.State, deref(got.LastError))
		}
	})
	t.Run("job-file", func(t *testing.T) {
		t.Parallel()
		j := enqueueJob(t, c, `{"queue":"nofile","kind":"k"}`)
		r := runner(t, c.BaseURL, []string{"TMPDIR=" + filepath.Join(t.TempDir(), "missing")}, "--once", "--queue", "nofile", "--", "cat")
		if code := r.exit(t, 30*time.Second); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if got := getJob(t, c, j.ID); got.State != "scheduled" || !strings.Contains(deref(got.LastError), "create the job file") {
			t.Errorf("job %s, last_error %q; want failed, the job file", got.State, deref(got.LastError))
		}
	})
	t.Run("escaped", func(t *testing.T) {
		t.Parallel()
		j := enqueueJob(t, c, `{"queue":"escaped","kind":"k"}`)
		r := runner(t, c.BaseURL, nil, "--once", "--queue", "escaped", "--", "sh", "-c", "setsid sleep 8 & echo hi")
		if code := r.exit(t, 30*time.Second); code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
		if got := getJob(t, c, j.ID); got.State != "succeeded" || string(got.Result) != `"hi"` {
			t.Errorf("job %s with %s, want succeeded with \"hi\"", got.State, got.Result)
		}
	})
}
