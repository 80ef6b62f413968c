package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/tetherq/tether/client"
)

// pollsConfig is the configuration of tether polls.
type pollsConfig struct {
	url      string
	token    string
	pollers  int
	queues   int
	enqueues int
	gap      time.Duration
	idle     time.Duration
	timeout  time.Duration
}

func parsePolls(args []string, stderr io.Writer) (pollsConfig, error) {
	var c pollsConfig
	fs := flag.NewFlagSet("tether polls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "server URL")
	fs.StringVar(&c.token, "token", os.Getenv("TETHER_TOKEN"), "bearer token (worker or admin); default $TETHER_TOKEN")
	fs.IntVar(&c.pollers, "pollers", 1000, "long-polls waiting at once, each as its own worker")
	fs.IntVar(&c.queues, "queues", 1000, "queues they wait on (poller i waits on queue i mod queues)")
	fs.IntVar(&c.enqueues, "enqueues", 200, "jobs enqueued one at a time, each into a random queue, while the polls wait")
	fs.DurationVar(&c.gap, "gap", 20*time.Millisecond, "time between two enqueues")
	fs.DurationVar(&c.idle, "idle", 5*time.Second, "how long to measure the server's CPU with every poll waiting and nothing enqueued")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.pollers < 1 || c.queues < 1 || c.queues > c.pollers || c.enqueues < 1 {
		return c, errors.New("--pollers, --queues and --enqueues must be at least 1, --queues at most --pollers")
	}
	return c, nil
}

// polls measures what idle long-polls cost: the server's CPU while pollers
// long-polls wait on queues empty queues, then, as jobs arrive one at a time
// in random queues, how long an enqueue takes and how long after it starts
// the poll of that queue answers with the job. It prints one line.
func polls(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parsePolls(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{
		MaxIdleConns: cfg.pollers + 16, MaxIdleConnsPerHost: cfg.pollers + 16, IdleConnTimeout: time.Minute,
	}}
	c := client.New(cfg.url)
	c.Token, c.HTTP = cfg.token, hc
	run := "polls-" + randomHex(4)
	queue := func(i int) string { return fmt.Sprintf("%s-q%d", run, i%cfg.queues) }

	// The pollers: each lease waits up to 30 s; a job it gets is acked and
	// its arrival reported.
	arrived := make(chan arrival, cfg.enqueues)
	pctx, stopPollers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	workers := make([]string, cfg.pollers)
	for i := range cfg.pollers {
		workers[i] = fmt.Sprintf("%s-w%d", run, i)
		wg.Go(func() { poll(pctx, c, workers[i], queue(i), arrived) })
	}
	defer func() {
		stopPollers()
		wg.Wait()
		cctx := context.WithoutCancel(ctx)
		for _, w := range workers {
			_ = c.DeregisterWorker(cctx, w)
		}
	}()
	if err := waitPolls(ctx, hc, cfg, cfg.pollers, stderr); err != nil {
		return err
	}

	// Idle: every poll waits, nothing happens.
	cpu0, cpuOK := serverCPU(ctx, hc, cfg.url, cfg.token)
	t0 := time.Now()
	select {
	case <-time.After(cfg.idle):
	case <-ctx.Done():
		return ctx.Err()
	}
	cpu1, _ := serverCPU(ctx, hc, cfg.url, cfg.token)
	idleCPU := "n/a"
	if cpuOK {
		idleCPU = fmt.Sprintf("%.1f%%", 100*(cpu1-cpu0)/time.Since(t0).Seconds())
	}
	rss := "n/a"
	if v, ok := serverMetric(ctx, hc, cfg.url, cfg.token, "process_resident_memory_bytes"); ok {
		rss = fmt.Sprintf("%.0fMB", v/1e6)
	}

	// Jobs one at a time, each into a random queue.
	started := map[string]time.Time{}
	var enq, wake []time.Duration
	for range cfg.enqueues {
		q := queue(rand.IntN(cfg.queues))
		t := time.Now()
		j, err := c.Enqueue(ctx, client.JobSpec{Kind: "poll", Queue: q})
		if err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		enq = append(enq, time.Since(t))
		started[j.ID] = t
		for drained := false; !drained; {
			select {
			case a := <-arrived:
				wake = append(wake, a.at.Sub(started[a.id]))
			default:
				drained = true
			}
		}
		time.Sleep(cfg.gap)
	}
	deadline := time.After(10 * time.Second)
	for len(wake) < cfg.enqueues {
		select {
		case a := <-arrived:
			wake = append(wake, a.at.Sub(started[a.id]))
		case <-deadline:
			return fmt.Errorf("%d of %d jobs were not leased within 10 s of the last enqueue", cfg.enqueues-len(wake), cfg.enqueues)
		}
	}
	fmt.Fprintf(stdout, "tether polls pollers=%d queues=%d idle cpu=%s rss=%s enqueue p50=%s p99=%s enqueue→poll p50=%s p99=%s\n",
		cfg.pollers, cfg.queues, idleCPU, rss, msText(percentile(enq, 0.5)), msText(percentile(enq, 0.99)),
		msText(percentile(wake, 0.5)), msText(percentile(wake, 0.99)))
	return nil
}

// arrival is a job a poll answered with, and when.
type arrival struct {
	id string
	at time.Time
}

// poll long-polls queue as worker until ctx ends, acking what it gets.
func poll(ctx context.Context, c *client.Client, worker, queue string, arrived chan<- arrival) {
	req := client.LeaseRequest{WorkerID: worker, Queues: []string{queue}, Max: 1, WaitMS: 30000}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		jobs, err := c.Lease(ctx, req)
		if err != nil {
			select { // a refused or failed poll: not a busy loop
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			continue
		}
		for _, j := range jobs {
			at := time.Now()
			_, _ = c.Ack(ctx, j.ID, j.Lease.Token, nil)
			select {
			case arrived <- arrival{j.ID, at}:
			default: // more than the driver asked for: not this bench's job
			}
		}
	}
}

// waitPolls waits until the server reports n long-polls waiting (its
// tether_long_polls_waiting gauge); a server without the gauge (an older
// one) gets five seconds instead.
func waitPolls(ctx context.Context, hc *http.Client, cfg pollsConfig, n int, stderr io.Writer) error {
	for first := true; ; first = false {
		v, ok := serverMetric(ctx, hc, cfg.url, cfg.token, "tether_long_polls_waiting")
		if ok && int(v) >= n {
			return nil
		}
		if !ok && first {
			fmt.Fprintln(stderr, "tether polls: the server reports no tether_long_polls_waiting; giving the polls 5 s to start")
			select {
			case <-time.After(5 * time.Second):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("the server reports %v of %d long-polls waiting (metric read: %v): %w", v, n, ok, ctx.Err())
		}
	}
}
