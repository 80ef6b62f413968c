//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tetherq/tether/client"
)

// childProc is one job's process group. Its leader is the keeper (this binary
// run as keeperCommand), which runs the command and tells the runner how it
// ended, and which kills the whole group when the runner dies.
type childProc struct {
	cmd    *exec.Cmd
	ended  chan childExit // the command's end, sent once
	stdout stdoutCapture
	stderr stderrTail
	pipes  []*os.File // the runner's ends, closed in finish
	io     sync.WaitGroup

	mu     sync.Mutex
	reaped bool // the keeper's pid, the group's id, may belong to another process now
}

// childExit is how the command ended: its exit code, or the signal that killed
// it, or the reason it did not start.
type childExit struct {
	code   int
	signal syscall.Signal
	err    string
}

// spawn starts the keeper with the command under it, in a process group of
// its own: fds 0-2 go to the command, 3 is its control channel, and the
// keeper alone holds 4 (the lifeline) and 5 (where it reports the end).
func (w *cmdWorker) spawn(ctx context.Context, job *client.Job, file string) (*childProc, error) {
	p, err := makePipes(6)
	if err != nil {
		return nil, fmt.Errorf("create the child's pipes: %w", err)
	}
	stdin, stdout, stderr, ctl, life, status := p[0], p[1], p[2], p[3], p[4], p[5]
	theirs := []*os.File{stdin.r, stdout.w, stderr.w, ctl.w, life.r, status.w}
	// life.w is never written: the keeper reads EOF when the runner dies,
	// and when finish closes it.
	ours := []*os.File{stdin.w, stdout.r, stderr.r, ctl.r, life.w, status.r}
	cmd := exec.Command(w.self, append([]string{keeperCommand, w.path}, w.cfg.cmd...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin.r, stdout.w, stderr.w
	cmd.ExtraFiles = []*os.File{ctl.w, life.r, status.w}
	cmd.Env = w.childEnv(job, file)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeFiles(theirs)
	if err != nil {
		closeFiles(ours)
		return nil, fmt.Errorf("start the child: %w", err)
	}
	c := &childProc{cmd: cmd, ended: make(chan childExit, 1), pipes: ours}
	c.stdout.max = w.cfg.maxResult
	c.io.Add(4)
	go func() {
		defer c.io.Done()
		_, _ = stdin.w.Write(payloadOrNull(job.Payload)) // EPIPE when the command reads no stdin
		stdin.w.Close()
	}()
	go func() {
		defer c.io.Done()
		c.stdout.fill(stdout.r)
	}()
	go func() {
		defer c.io.Done()
		w.passStderr(stderr.r, job.ID, &c.stderr)
	}()
	go func() {
		defer c.io.Done()
		w.control(ctx, ctl.r, job.ID)
	}()
	go c.wait(status.r)
	return c, nil
}

// childPipe is the two ends of an os.Pipe. Both close on exec: only the ends
// given to a child as its stdio or ExtraFiles reach it.
type childPipe struct{ r, w *os.File }

func makePipes(n int) ([]childPipe, error) {
	p := make([]childPipe, n)
	for i := range p {
		r, w, err := os.Pipe()
		if err != nil {
			for _, q := range p[:i] {
				closeFiles([]*os.File{q.r, q.w})
			}
			return nil, err
		}
		p[i] = childPipe{r, w}
	}
	return p, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

func payloadOrNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// wait reads the keeper's report, kills what is left of the group (a
// daemon the command left behind, or the keeper itself), reaps the keeper
// and sends the end. The group id stays the keeper's until it is reaped,
// so no kill, here or in signal, can reach another process.
func (c *childProc) wait(status *os.File) {
	line, _ := io.ReadAll(io.LimitReader(status, 4096))
	c.mu.Lock()
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	_ = c.cmd.Wait()
	c.reaped = true
	c.mu.Unlock()
	end, ok := parseExit(string(line))
	if !ok {
		// The keeper died before reporting: killed with its group.
		ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
		end = childExit{code: ws.ExitStatus()}
		if ws.Signaled() {
			end = childExit{signal: ws.Signal()}
		}
	}
	c.ended <- end
}

// parseExit reads the keeper's line: "exit N", "signal N" or "error MSG".
func parseExit(line string) (childExit, bool) {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	n, err := strconv.Atoi(rest)
	switch {
	case word == "exit" && err == nil:
		return childExit{code: n}, true
	case word == "signal" && err == nil:
		return childExit{signal: syscall.Signal(n)}, true
	case word == "error":
		return childExit{err: rest}, true
	}
	return childExit{}, false
}

// signal sends sig to the child's group, until its keeper is reaped.
func (c *childProc) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	}
}

// supervise waits for the command's end, signalling its group on the way:
// when the runner starts to stop, SIGTERM, and SIGKILL once the grace has
// run out (the handler's ctx ends with ErrShutdown); on a cancel or a lost
// lease, SIGTERM, then SIGKILL after grace. stopped reports whether the
// runner's stop signalled it.
func (c *childProc) supervise(ctx context.Context, grace time.Duration) (end childExit, stopped bool) {
	draining, done := client.Draining(ctx), ctx.Done()
	var kill <-chan time.Time
	for {
		select {
		case end := <-c.ended:
			return end, stopped
		case <-draining:
			draining, stopped = nil, true
			c.signal(syscall.SIGTERM)
		case <-done:
			done = nil
			if errors.Is(context.Cause(ctx), client.ErrShutdown) {
				stopped = true
				c.signal(syscall.SIGKILL)
				continue
			}
			c.signal(syscall.SIGTERM)
			t := time.NewTimer(grace)
			defer t.Stop()
			kill = t.C
		case <-kill:
			kill = nil
			c.signal(syscall.SIGKILL)
		}
	}
}

// ioDrain is how long finish waits for the child's pipes to close once its
// group is dead: only a process that left the group (setsid) can hold
// them longer, and the runner does not wait for it.
const ioDrain = 5 * time.Second

// finish waits for the stdio copies, closes the runner's ends of the pipes
// and, last, the lifeline.
func (c *childProc) finish() {
	done := make(chan struct{})
	go func() {
		c.io.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(ioDrain):
		for _, f := range c.pipes {
			f.Close() // ends the copies still reading
		}
		<-done
	}
	for _, f := range c.pipes {
		f.Close()
	}
}

// passStderr copies the child's stderr to the runner's, each line prefixed
// with the job id, and keeps its tail for last_error.
func (w *cmdWorker) passStderr(r io.Reader, id string, t *stderrTail) {
	br := bufio.NewReaderSize(r, 16<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			t.Write(line)
			w.out.line(id+": ", line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
