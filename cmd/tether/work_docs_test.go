//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/store/storetest"
)

// docBlocks returns the fenced blocks of language lang in docs/workers.md.
func docBlocks(t *testing.T, lang string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/workers.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		out = append(out, m[1])
	}
	return out
}

// python finds an interpreter that has requests: the docs' worker needs
// nothing else. make tools installs Debian's python3-requests when none
// has it; on CI its absence fails the test.
func python(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(py); err == nil && exec.Command(path, "-c", "import requests").Run() == nil {
			return path
		}
	}
	storetest.Unavailable(t, "no python3 with requests (python3, /usr/bin/python3)", "make tools installs python3-requests")
	return ""
}

// waitOutput waits until p has printed want n times.
func waitOutput(t *testing.T, p *process, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(p.output(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q not printed %d times within 60s:\n%s", want, n, p.output())
		}
		time.Sleep(20 * time.Millisecond) // polling an outside process's output: no signal to wait on
	}
}

// The Python worker of docs/workers.md, run as printed: it acks, fails,
// honours a cancel from its heartbeat, and on SIGTERM deregisters and
// exits 0.
func TestDocsPythonWorker(t *testing.T) {
	t.Parallel()
	py := python(t)
	blocks := docBlocks(t, "python")
	if len(blocks) != 1 {
		t.Fatalf("docs/workers.md has %d python blocks, want the one worker", len(blocks))
	}
	script := filepath.Join(t.TempDir(), "worker.py")
	if err := os.WriteFile(script, []byte(blocks[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	_, c := startServer(t, fastArgs...)
	var sums []string
	for i := range 4 {
		sums = append(sums, enqueueJob(t, c, `{"queue":"sums","kind":"sum","payload":{"numbers":[1,2,`+string(rune('0'+i))+`]}}`).ID)
	}
	bad := enqueueJob(t, c, `{"queue":"sums","kind":"sum","payload":{"numbers":"x"},"max_attempts":1}`).ID
	slow := enqueueJob(t, c, `{"queue":"sums","kind":"sum","payload":{"numbers":[1,2,3],"delay":20}}`).ID

	w := start(t, []string{"TETHER_URL=" + c.BaseURL, "QUEUES=sums"}, py, script)
	waitOutput(t, w, "running "+slow, 1)
	adminPost(t, c, "/v1/jobs/"+slow+"/cancel")
	waitOutput(t, w, "failed "+slow, 1)
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, 30*time.Second); code != 0 || !strings.HasSuffix(w.output(), "stopped\n") {
		t.Fatalf("the worker exited %d after SIGTERM, want 0 after \"stopped\":\n%s", code, w.output())
	}
	for i, id := range sums {
		if j := getJob(t, c, id); j.State != "succeeded" || string(j.Result) != `{"sum":`+string(rune('3'+i))+`}` {
			t.Errorf("sum job %d: %s %s", i, j.State, j.Result)
		}
	}
	if j := getJob(t, c, bad); j.State != "dead" || !strings.HasPrefix(deref(j.LastError), "TypeError") {
		t.Errorf("the bad job: %s, last_error %q; want dead with the TypeError", j.State, deref(j.LastError))
	}
	if j := getJob(t, c, slow); j.State != "cancelled" {
		t.Errorf("the cancelled job: %s, want cancelled", j.State)
	}
	if ws := registeredWorkers(t, c); len(ws) != 0 {
		t.Errorf("workers still registered after the stop: %v", ws)
	}
}

// The tether work line of docs/workers.md, run as printed.
func TestDocsWorkLine(t *testing.T) {
	t.Parallel()
	blocks := docBlocks(t, "sh")
	if len(blocks) != 1 || strings.Count(strings.TrimSpace(blocks[0]), "\n") != 0 || !strings.HasPrefix(blocks[0], "tether work ") {
		t.Fatalf("docs/workers.md's sh blocks: %q; want one tether work line", blocks)
	}
	_, tether := binaries(t)
	_, c := startServer(t)
	j := enqueueJob(t, c, `{"queue":"shout","kind":"k","payload":"hello"}`)
	env := []string{"TETHER_URL=" + c.BaseURL, "PATH=" + filepath.Dir(tether) + ":" + os.Getenv("PATH")}
	w := start(t, env, "bash", "-c", "exec "+blocks[0]) // exec: the signal below reaches tether itself
	waitOutput(t, w, `msg="job acked"`, 1)
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Errorf("tether work exited %d after SIGTERM, want 0", code)
	}
	if got := getJob(t, c, j.ID); got.State != "succeeded" || string(got.Result) != `"HELLO"` {
		t.Errorf("job %s with result %s, want succeeded with \"HELLO\"", got.State, got.Result)
	}
}
