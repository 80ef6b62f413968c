//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tetherq/tether/client"
)

// cmdWorker runs each job as a child process: tether work's Runner handler.
type cmdWorker struct {
	cfg  workConfig
	path string // the command, found on PATH once at start
	self string // this binary, which runs as each child's keeper
	out  *lineWriter
	log  *slog.Logger
}

func runWork(ctx context.Context, cfg workConfig, c *client.Client, stderr io.Writer) error {
	path, err := exec.LookPath(cfg.cmd[0])
	if err != nil {
		return fmt.Errorf("work: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("work: find this binary, which keeps each child: %w", err)
	}
	out := &lineWriter{w: stderr}
	w := &cmdWorker{cfg: cfg, path: path, self: self, out: out, log: slog.New(slog.NewTextHandler(out, nil))}
	r := &client.Runner{
		Client: c, Handler: w.handle, Queues: cfg.queues, Kinds: cfg.kinds, Concurrency: cfg.concurrency,
		WorkerID: cfg.workerID, Grace: cfg.grace, Logger: w.log,
		Labels: map[string]string{"runner": "tether work", "command": label(filepath.Base(cfg.cmd[0]))},
	}
	if !cfg.once {
		return r.Run(ctx)
	}
	out1, err := r.RunOnce(ctx, cfg.wait)
	if err != nil {
		return err
	}
	return onceExit(out1, cfg.wait, stderr)
}

// label cuts s to the API's 1024 bytes of a label value, whole runes.
func label(s string) string {
	for len(s) > 1024 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}

// handle runs one job's child to its end and says how the job ends.
func (w *cmdWorker) handle(ctx context.Context, job *client.Job) (json.RawMessage, error) {
	file, err := writeJobFile(job)
	if err != nil {
		return nil, err
	}
	defer os.Remove(file)
	c, err := w.spawn(ctx, job, file)
	if err != nil {
		return nil, err
	}
	end, stopped := c.supervise(ctx, w.cfg.grace)
	c.finish()
	return w.verdict(ctx, c, end, stopped)
}

// writeJobFile writes the job, without its lease token, to a temporary
// file only this user can read (os.CreateTemp makes it 0600).
func writeJobFile(job *client.Job) (string, error) {
	j := *job
	if j.Lease != nil {
		l := *j.Lease
		l.Token = ""
		j.Lease = &l
	}
	b, err := json.Marshal(&j)
	if err != nil {
		return "", fmt.Errorf("encode the job file: %w", err)
	}
	f, err := os.CreateTemp("", "tether-job-*.json")
	if err != nil {
		return "", fmt.Errorf("create the job file: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write the job file: %w", err)
	}
	return f.Name(), nil
}

// childEnv is the runner's environment for the child, without its token
// and with the job's variables (any of them the runner had are replaced;
// TRACEPARENT and TRACESTATE are dropped for a job without a trace).
func (w *cmdWorker) childEnv(job *client.Job, file string) []string {
	mine := map[string]bool{"TETHER_TOKEN": true, "TRACEPARENT": true, "TRACESTATE": true}
	set := []string{
		"TETHER_URL=" + w.cfg.url,
		"TETHER_JOB_ID=" + job.ID,
		"TETHER_JOB_KIND=" + job.Kind,
		"TETHER_QUEUE=" + job.Queue,
		"TETHER_ATTEMPT=" + strconv.Itoa(job.Attempt),
		"TETHER_MAX_ATTEMPTS=" + strconv.Itoa(job.MaxAttempts),
		"TETHER_JOB_FILE=" + file,
	}
	if job.Trace != nil {
		set = append(set, "TRACEPARENT="+job.Trace.Traceparent)
		if job.Trace.Tracestate != "" {
			set = append(set, "TRACESTATE="+job.Trace.Tracestate)
		}
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		mine[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !mine[k] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}
