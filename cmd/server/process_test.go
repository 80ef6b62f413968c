package main

// Process-level tests: the real binary, real worker processes, real
// signals. Deadlines use short injected settings (--dead-after 2s --tick
// 200ms) and generous limits, never tight sleeps.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// serverBin is the server binary TestMain builds once for every test.
var serverBin string

func TestMain(m *testing.M) {
	if os.Getenv(workerEnvURL) != "" {
		os.Exit(workerMain())
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tether-server-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBin = filepath.Join(dir, "server")
	args := []string{"build", "-o", serverBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the server:", err)
		return 1
	}
	return m.Run()
}

// proc is a running server process.
type proc struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	out  strings.Builder // everything it printed
	done chan struct{}   // closed when it has exited
	err  error           // its exit status, once done
}

var listenLine = regexp.MustCompile(`^tether listening on (http://\S+) `)

// startServer runs the binary on a free port with the store file db and
// args, waits until /healthz answers, and kills it at cleanup.
func startServer(t *testing.T, db string, args ...string) *proc {
	t.Helper()
	args = append([]string{"--addr", "127.0.0.1:0", "--store", "sqlite:" + db, "--node-id", "test-node"}, args...)
	return startProcess(t, "", args...)
}

// startProcess runs the binary in dir (the test's directory if empty) with
// args, waits until /healthz answers, and kills it at cleanup.
func startProcess(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(serverBin, args...), done: make(chan struct{})}
	p.cmd.Dir = dir
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.cmd.Stdout
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill(t) })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	select {
	case p.url = <-addr:
	case <-p.done:
		t.Fatalf("server exited before listening: %v\n%s", p.err, p.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("no listen line within 30s:\n%s", p.output())
	}
	p.waitHealthy(t)
	return p
}

func (p *proc) waitHealthy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond) // polling an outside process: no signal to wait on
	}
	t.Fatalf("/healthz did not answer 200 within 10s:\n%s", p.output())
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// signal sends sig and waits for the exit, up to 20 s.
func (p *proc) signal(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return p.err
	case <-time.After(20 * time.Second):
		t.Fatalf("server did not exit within 20s of %v:\n%s", sig, p.output())
		return nil
	}
}

func (p *proc) kill(t *testing.T) {
	select {
	case <-p.done:
	default:
		_ = p.signal(t, syscall.SIGKILL)
	}
	if t.Failed() {
		t.Logf("server output:\n%s", p.output())
	}
}

// newClient returns a client with a pool big enough for the test's
// concurrency, so every request gets a connection at once.
func newClient(url string) *client.Client {
	c := client.New(url)
	c.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	return c
}

// enqueue puts n jobs in queue and returns their ids.
func enqueue(t *testing.T, c *client.Client, queue string, n int) []string {
	t.Helper()
	specs := make([]client.JobSpec, n)
	for i := range specs {
		specs[i] = client.JobSpec{Kind: "test", Queue: queue, Payload: []byte(fmt.Sprintf(`{"i":%d}`, i))}
	}
	jobs, err := c.EnqueueBatch(t.Context(), specs)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// leaseAll long-polls as worker until it holds want jobs of queue, or
// the deadline passes.
func leaseAll(ctx context.Context, t *testing.T, c *client.Client, worker, queue string, want int, deadline time.Time) []*client.Job {
	t.Helper()
	var got []*client.Job
	for len(got) < want && time.Now().Before(deadline) {
		jobs, err := c.Lease(ctx, client.LeaseRequest{WorkerID: worker, Queues: []string{queue}, Max: want - len(got), WaitMS: 5000})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, jobs...)
	}
	return got
}
