//go:build linux

package main

// Helpers of the process-level tests of tether work: the real server and
// tether binaries, real children, real signals. Deadlines use short
// injected settings (--dead-after 2s --tick 200ms) and generous limits;
// waits are on signals (a process's exit, a fifo's EOF, a long-poll's
// answer) rather than sleeps.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// bins are the server and tether binaries, built once for every test that
// asks (TestMain removes them).
var bins struct {
	once           sync.Once
	dir            string
	server, tether string
	err            error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// binaries builds the server and this command. The tether binary is built
// with -race when the tests are: it is the code under test. The server,
// tested under -race by its own package, is built without, to leave the
// machine's cores to what is tested here.
func binaries(t *testing.T) (server, tether string) {
	t.Helper()
	bins.once.Do(func() {
		bins.dir, bins.err = os.MkdirTemp("", "tether-work-test-")
		if bins.err != nil {
			return
		}
		bins.server, bins.tether = filepath.Join(bins.dir, "server"), filepath.Join(bins.dir, "tether")
		race := []string{}
		if raceEnabled {
			race = []string{"-race"}
		}
		for _, b := range []struct {
			out, pkg string
			flags    []string
		}{{bins.server, "../server", nil}, {bins.tether, ".", race}} {
			cmd := exec.Command("go", append(append([]string{"build", "-o", b.out}, b.flags...), b.pkg)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				bins.err = fmt.Errorf("build %s: %v\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.server, bins.tether
}

// process is a running binary whose output the test keeps.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{} // closed once it has exited
	err  error         // its exit status, once done
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs bin with args and env added to the test's, and kills it at
// cleanup.
func start(t *testing.T, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT) // in case a test left it stopped
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s output (its last 40 lines):\n%s", filepath.Base(bin), lastLines(p.output(), 40))
		}
	})
	return p
}

// exit waits up to within for the process to end and returns its exit
// code (-1 for a signal).
func (p *process) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("%s did not exit within %v:\n%s", p.cmd.Path, within, p.output())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

func (p *process) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// fastArgs make a silent worker dead after 2 s, noticed within a tick.
var fastArgs = []string{"--dead-after", "2s", "--tick", "200ms"}

var listenLine = regexp.MustCompile(`tether listening on (http://\S+) `)

// startServer runs the server over a fresh SQLite file with args and
// returns it with a client for it, once it answers.
func startServer(t *testing.T, args ...string) (*process, *client.Client) {
	t.Helper()
	server, _ := binaries(t)
	args = append([]string{"--addr", "127.0.0.1:0", "--store", "sqlite:" + filepath.Join(t.TempDir(), "t.db"), "--node-id", "test-node"}, args...)
	p := start(t, nil, server, args...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := listenLine.FindStringSubmatch(p.output()); m != nil {
			c := client.New(m[1])
			c.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
			return p, c
		}
		select {
		case <-p.done:
			t.Fatalf("the server exited: %v\n%s", p.err, p.output())
		case <-time.After(20 * time.Millisecond): // polling an outside process's output: no signal to wait on
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listen line within 30s:\n%s", p.output())
		}
	}
}

// runner starts tether work against url with args (flags, --, command).
func runner(t *testing.T, url string, env []string, args ...string) *process {
	t.Helper()
	_, tether := binaries(t)
	return start(t, env, tether, append([]string{"work", "--url", url}, args...)...)
}

// probe is a fifo a test's child opens for writing on fd 9 (exec
// 9>"$PROBE_DIR/$TETHER_JOB_ID") and writes lines to. The test reads the
// lines, and sees EOF only when every process holding it has exited: the
// child and all it forked.
type probe struct {
	lines  chan string
	closed chan struct{}
}

// newProbe makes the fifo dir/name and reads it in the background.
func newProbe(t *testing.T, dir, name string) *probe {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &probe{lines: make(chan string, 16), closed: make(chan struct{})}
	go func() {
		defer close(p.closed)
		f, err := os.Open(path) // blocks until the child opens it
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

// line waits for the child's next line.
func (p *probe) line(t *testing.T) string {
	t.Helper()
	select {
	case l := <-p.lines:
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("the child wrote nothing to its probe within 30s")
		return ""
	}
}

// gone waits until every process holding the probe has exited.
func (p *probe) gone(t *testing.T, within time.Duration, what string) {
	t.Helper()
	select {
	case <-p.closed:
	case <-time.After(within):
		t.Fatalf("%s: a child process still runs %v later", what, within)
	}
}

// groupAlive reports whether a process of group pgid lives (zombies
// aside), from /proc.
func groupAlive(pgid int) bool {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// pgidOf reads a live process's group from /proc.
func pgidOf(t *testing.T, pid string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	n, _ := strconv.Atoi(f[2])
	return n
}

// enqueueJob posts spec's JSON to /v1/jobs with header (k, v pairs) and
// returns the job.
func enqueueJob(t *testing.T, c *client.Client, spec string, header ...string) *client.Job {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", c.BaseURL+"/v1/jobs", strings.NewReader(spec))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("enqueue %s: %d %s", spec, resp.StatusCode, b)
	}
	var j client.Job
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}

func getJob(t *testing.T, c *client.Client, id string) *client.Job {
	t.Helper()
	j, err := c.GetJob(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// adminPost makes a POST the client has no method for.
func adminPost(t *testing.T, c *client.Client, path string) {
	t.Helper()
	resp, err := http.Post(c.BaseURL+path, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d", path, resp.StatusCode)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "")
}
