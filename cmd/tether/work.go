package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/client"
)

// workConfig is tether work's command line (shared/API.md, "The worker
// runner").
type workConfig struct {
	url, token, workerID string
	queues, kinds        []string
	concurrency          int
	fatal                map[int]bool // exit codes that fail with retry false
	snoozeCode           int
	snoozeDelay          time.Duration
	grace                time.Duration
	maxResult            int64
	once                 bool
	wait                 time.Duration
	cmd                  []string
}

const workUsage = `usage: tether work [flags] -- CMD [ARGS...]

Runs CMD once per job leased from the queues: the job's payload as JSON on
stdin, the job in TETHER_JOB_* variables and TETHER_JOB_FILE, its trace in
TRACEPARENT. Exit 0 acks (stdout is the result), --snooze-exit-code
releases, any other exit fails the job with the tail of stderr. The child
may write {"progress": N} or {"extend_ms": N} lines to fd 3. SIGTERM or
SIGINT stops leasing, forwards SIGTERM, waits --grace, kills what is left,
releases its jobs and exits 0. docs/workers.md has the whole story.

flags:
`

func parseWork(args []string, getenv func(string) string, stderr io.Writer) (workConfig, error) {
	c := workConfig{fatal: map[int]bool{}}
	fs := flag.NewFlagSet("tether work", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, workUsage)
		fs.PrintDefaults()
	}
	// The variables apply after parsing, so that --help never prints a
	// token as a default.
	fs.StringVar(&c.url, "url", "", "server URL (default $TETHER_URL, else http://127.0.0.1:8080)")
	fs.StringVar(&c.token, "token", "", "bearer token, worker role (default $TETHER_TOKEN); never passed to CMD")
	fs.Func("queue", "queue to lease from; repeat or separate with commas (default: default)", listOf(&c.queues))
	fs.Func("kind", "lease only this kind; repeat or separate with commas (default: all)", listOf(&c.kinds))
	fs.IntVar(&c.concurrency, "concurrency", 1, "jobs run at once (1..1000)")
	fs.StringVar(&c.workerID, "worker-id", "", "worker id (default $TETHER_WORKER_ID, else host:pid:random)")
	fs.Func("fatal-exit-codes", "exit codes that fail the job for good (retry false, to dead); comma-separated", c.addFatal)
	fs.IntVar(&c.snoozeCode, "snooze-exit-code", 75, "exit code that releases the job after --snooze-delay, its attempt not spent")
	fs.DurationVar(&c.snoozeDelay, "snooze-delay", 30*time.Second, "how long a snoozed job waits")
	fs.DurationVar(&c.grace, "grace", client.DefaultGrace, "SIGTERM → SIGKILL delay, for a cancel, a lost lease and the runner's stop")
	c.maxResult = 1 << 20
	fs.Func("max-result", "most stdout kept as the result: bytes, or with KiB or MiB (default 1MiB); more fails the job for good", func(s string) (err error) {
		c.maxResult, err = parseSize(s)
		return err
	})
	fs.BoolVar(&c.once, "once", false, "run one job and exit: 0 acked, 1 failed (or not acked), 3 none came within --wait")
	fs.DurationVar(&c.wait, "wait", 30*time.Second, "with --once, how long to wait for a job")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.cmd = fs.Args()
	c.url = cmp.Or(c.url, getenv("TETHER_URL"), "http://127.0.0.1:8080")
	c.token = cmp.Or(c.token, getenv("TETHER_TOKEN"))
	c.workerID = cmp.Or(c.workerID, getenv("TETHER_WORKER_ID"))
	if len(c.queues) == 0 {
		c.queues = []string{"default"}
	}
	return c, c.check()
}

func (c *workConfig) check() error {
	switch {
	case len(c.cmd) == 0:
		return errors.New("work: no command: tether work [flags] -- CMD [ARGS...]")
	case c.concurrency < 1 || c.concurrency > 1000:
		return errors.New("work: --concurrency must be 1..1000")
	case c.snoozeCode < 1 || c.snoozeCode > 255:
		return errors.New("work: --snooze-exit-code must be 1..255")
	case c.fatal[c.snoozeCode]:
		return fmt.Errorf("work: exit code %d is both fatal and the snooze code", c.snoozeCode)
	case c.grace <= 0, c.snoozeDelay < 0, c.wait < 0:
		return errors.New("work: --grace must be positive, --snooze-delay and --wait not negative")
	case c.maxResult < 1:
		return errors.New("work: --max-result must be at least 1 byte")
	}
	return nil
}

func (c *workConfig) addFatal(s string) error {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 255 {
			return fmt.Errorf("%q is not an exit code 1..255", f)
		}
		c.fatal[n] = true
	}
	return nil
}

// listOf appends each comma-separated value of a repeated flag to dst.
func listOf(dst *[]string) func(string) error {
	return func(s string) error {
		for _, v := range strings.Split(s, ",") {
			if v = strings.TrimSpace(v); v != "" {
				*dst = append(*dst, v)
			}
		}
		return nil
	}
}

// parseSize reads 1048576, 512KiB or 1MiB.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = v, m
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a size (bytes, or with KiB or MiB)", s)
	}
	return n * mult, nil
}

// work is tether work: a Runner whose handler runs the command.
func workCommand(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := parseWork(args, os.Getenv, stderr)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: runnerTransport(cfg.concurrency + 2)}
	c := &client.Client{BaseURL: strings.TrimRight(cfg.url, "/"), HTTP: hc, Token: cfg.token}
	return explainRefusal(runWork(ctx, cfg, c, stderr))
}

// runnerTransport is Go's default transport keeping idle connections for every
// call a runner can have at once (extends, settles, the heartbeat, the
// long-poll), rather than Go's two.
func runnerTransport(conns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = conns
	return t
}

// onceExit reports a RunOnce's end as tether work --once exits: 0 acked, 1
// otherwise, 3 when no job came.
func onceExit(out *client.Outcome, wait time.Duration, stderr io.Writer) error {
	switch {
	case out == nil:
		fmt.Fprintf(stderr, "tether work: no job within %v\n", wait)
		return exitCode(3)
	case out.End == client.EndAcked:
		return nil
	case out.Err != nil:
		return fmt.Errorf("job %s %s: %v", out.Job.ID, out.End, out.Err)
	default:
		return fmt.Errorf("job %s %s", out.Job.ID, out.End)
	}
}

// explainRefusal turns the server's refusal of the runner's token into words.
func explainRefusal(err error) error {
	var e *client.Error
	switch {
	case !errors.As(err, &e):
		return err
	case e.Status == http.StatusUnauthorized:
		return fmt.Errorf("the server refused the token (401 %s): set --token or TETHER_TOKEN to a worker token", e.Code)
	case e.Status == http.StatusForbidden:
		return fmt.Errorf("the token may not lease jobs (403 %s): tether work needs a worker (or admin) token", e.Code)
	}
	return err
}
