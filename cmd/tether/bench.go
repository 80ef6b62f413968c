package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetherq/tether/client"
)

// enqueueBatch is the producers' batch size, the API's maximum.
const enqueueBatch = 1000

type benchConfig struct {
	url          string
	queue        string // "" : a fresh bench-<random> queue
	keep         bool   // leave the jobs and workers behind
	jobs         int
	workers      int
	batch        int
	producers    int
	payloadBytes int
	timeout      time.Duration
	token        string
	serial       bool     // settle each batch before leasing the next
	procCPU      string   // report the CPU per job of local processes of this name
	cpuProfile   *os.File // the work phase's CPU profile, when asked for
	queues       int      // queues the jobs are spread over, every lease naming all
	otherQueues  int      // more queues, a job each, never leased from
	single       bool     // producers enqueue one job per request
	enqueueOnly  bool     // stop after the enqueue phase
	concurrency  int      // the queues' concurrency limit; 0: none
}

func parseBench(args []string, stderr io.Writer) (benchConfig, error) {
	var c benchConfig
	fs := flag.NewFlagSet("tether bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "server URL")
	fs.StringVar(&c.queue, "queue", "", "queue to use, which should hold no other jobs (default: a fresh bench-<random> one)")
	fs.BoolVar(&c.keep, "keep", false, "leave the settled jobs and the workers behind (default: delete the jobs, which needs an admin token when the server has tokens, and deregister the workers)")
	fs.IntVar(&c.jobs, "jobs", 20000, "jobs to enqueue and work")
	fs.IntVar(&c.workers, "workers", 4, "workers, each leasing and settling in a loop")
	fs.IntVar(&c.batch, "batch", 100, "jobs per lease (1..1000)")
	fs.IntVar(&c.producers, "producers", 2, "concurrent producers enqueueing batches of 1000")
	fs.IntVar(&c.payloadBytes, "payload-bytes", 100, "approximate payload size")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.StringVar(&c.token, "token", os.Getenv("TETHER_TOKEN"), "bearer token when the server has tokens (admin, or worker with --keep); default $TETHER_TOKEN")
	fs.BoolVar(&c.serial, "serial", false, "settle each batch before leasing the next (default: one settle in flight while the next lease runs)")
	fs.StringVar(&c.procCPU, "proc-cpu", "", "also report the CPU per job of this machine's processes with this command name (postgres, redis-server), or of the process with this id and its children (a postmaster and its backends), read from /proc (Linux)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the work phase to this file")
	fs.IntVar(&c.queues, "queues", 1, "spread the jobs over this many queues (QUEUE-0 … QUEUE-N-1 when more than 1), every lease naming all of them (1..100)")
	fs.IntVar(&c.otherQueues, "other-queues", 0, "this many more queues, QUEUE-other-I, hold a job each and are never leased from: the store holds queues + other-queues queues")
	fs.BoolVar(&c.single, "single", false, "producers enqueue one job per request (POST /v1/jobs) instead of batches of 1000")
	fs.BoolVar(&c.enqueueOnly, "enqueue-only", false, "measure the enqueue phase only (no workers; cpu/job is then the enqueue phase's)")
	fs.IntVar(&c.concurrency, "concurrency", 0, "set this concurrency limit on the queues before enqueueing (PUT /v1/queues/{name}/limits, admin), to measure the limited lease path; 0: no limits")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.jobs < 1, c.workers < 1, c.producers < 1:
		return c, errors.New("--jobs, --workers and --producers must be at least 1")
	case c.batch < 1 || c.batch > 1000:
		return c, errors.New("--batch must be 1..1000")
	case c.queues < 1 || c.queues > 100:
		return c, errors.New("--queues must be 1..100")
	case c.otherQueues < 0:
		return c, errors.New("--other-queues must not be negative")
	case c.concurrency < 0 || c.concurrency > 100_000:
		return c, errors.New("--concurrency must be 0..100000")
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return c, err
		}
		c.cpuProfile = f // bench closes it
	}
	return c, nil
}

// bench enqueues the jobs into a fresh queue, then burns them down, and
// prints one line of figures.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseBench(args, stderr)
	if err != nil {
		return err
	}
	if cfg.cpuProfile != nil {
		defer cfg.cpuProfile.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	conns := cfg.producers + 2*cfg.workers // a lease and a settle in flight per worker
	c := client.New(cfg.url)
	c.Token = cfg.token
	c.HTTP = &http.Client{Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute,
	}}
	queue := cfg.queue
	if queue == "" {
		queue = "bench-" + randomHex(4)
	}
	queues := queueNames(queue, cfg.queues)

	made, err := fillOtherQueues(ctx, c, queue, cfg)
	if !cfg.keep {
		defer func() {
			cleanUp(context.WithoutCancel(ctx), c, made, workerIDs(queue, cfg.workers), stderr)
		}()
	}
	if err != nil {
		return fmt.Errorf("fill the other queues: %w", err)
	}
	if cfg.concurrency > 0 {
		if !cfg.keep {
			defer unlimitQueues(context.WithoutCancel(ctx), c, queues, stderr)
		}
		if err := limitQueues(ctx, c, queues, cfg.concurrency); err != nil {
			return err
		}
	}
	// CPU per job of the measured phase: the enqueue with --enqueue-only,
	// else the work.
	cpu := &cpuMeter{ctx: ctx, hc: c.HTTP, url: cfg.url, token: cfg.token, jobs: cfg.jobs, proc: cfg.procCPU}
	cpu.start()
	start := time.Now()
	ids, calls, err := produce(ctx, c, queues, cfg)
	made = append(made, ids...)
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	enqueued := time.Since(start)
	limited := ""
	if cfg.concurrency > 0 {
		limited = fmt.Sprintf(" concurrency=%d", cfg.concurrency)
	}
	line := fmt.Sprintf("tether n=%d producers=%d workers=%d batch=%d queues=%d+%d%s enqueue=%.0f jobs/s calls=%s p50=%s p99=%s",
		cfg.jobs, cfg.producers, cfg.workers, cfg.batch, cfg.queues, cfg.otherQueues, limited,
		float64(cfg.jobs)/enqueued.Seconds(), callKind(cfg), msText(percentile(calls, 0.50)), msText(percentile(calls, 0.99)))
	if cfg.enqueueOnly {
		fmt.Fprintf(stdout, "%s %s\n", line, cpu)
		return nil
	}

	cpu.start()
	if cfg.cpuProfile != nil {
		if err := pprof.StartCPUProfile(cfg.cpuProfile); err != nil {
			return err
		}
	}
	start = time.Now()
	lat, err := work(ctx, c, queue, queues, cfg)
	if cfg.cpuProfile != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return fmt.Errorf("work: %w", err)
	}
	worked := time.Since(start)
	fmt.Fprintf(stdout, "%s work=%.0f jobs/s lease+settle p50=%s p99=%s %s\n", line, float64(cfg.jobs)/worked.Seconds(),
		msText(percentile(lat, 0.50)), msText(percentile(lat, 0.99)), cpu)
	return nil
}

// produce enqueues cfg.jobs jobs, job n in queues[n % len(queues)], from
// cfg.producers goroutines: in batches of enqueueBatch, or one a request
// with cfg.single. It returns the ids of the jobs it made and the latency
// of every call.
func produce(ctx context.Context, c *client.Client, queues []string, cfg benchConfig) ([]string, []time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx) // one failure stops every producer
	defer cancel()
	size := enqueueBatch
	if cfg.single {
		size = 1
	}
	calls := make(chan int) // the first job number of each call
	go func() {
		defer close(calls)
		for i := 0; i < cfg.jobs; i += size {
			select {
			case calls <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	errs := make(chan error, cfg.producers)
	var mu sync.Mutex
	ids := make([]string, 0, cfg.jobs)
	var lats []time.Duration
	var wg sync.WaitGroup
	for range cfg.producers {
		wg.Go(func() {
			for first := range calls {
				specs := make([]client.JobSpec, 0, size)
				for n := first; n < min(first+size, cfg.jobs); n++ {
					specs = append(specs, client.JobSpec{Kind: "bench", Queue: queues[n%len(queues)], Payload: payload(n, cfg.payloadBytes)})
				}
				t := time.Now()
				jobs, err := enqueue(ctx, c, specs)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				mu.Lock()
				lats = append(lats, time.Since(t))
				for _, j := range jobs {
					ids = append(ids, j.ID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	return ids, lats, <-errs // the first failure, nil if none
}

// workerIDs names the bench's workers.
func workerIDs(queue string, n int) []string {
	ids := make([]string, n)
	for w := range ids {
		ids[w] = fmt.Sprintf("%s-w%d", queue, w)
	}
	return ids
}

// cleanUp deletes the bench's jobs (every one is settled, or never ran when
// the bench failed) and deregisters its workers, so a bench leaves nothing
// behind. Deleting needs an admin token on a server with tokens; without
// one the jobs stay until retention prunes them, and it says so.
func cleanUp(ctx context.Context, c *client.Client, ids, workers []string, stderr io.Writer) {
	for _, w := range workers {
		if err := c.DeregisterWorker(ctx, w); err != nil && !errors.Is(err, client.ErrNotFound) {
			fmt.Fprintf(stderr, "tether bench: deregister worker %s: %v\n", w, err)
		}
	}
	next := make(chan string)
	var left atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for id := range next {
				if err := c.DeleteJob(ctx, id); err != nil && !errors.Is(err, client.ErrNotFound) {
					left.Add(1)
					first.Do(func() { fmt.Fprintf(stderr, "tether bench: delete job %s: %v\n", id, err) })
				}
			}
		})
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	if n := left.Load(); n > 0 {
		fmt.Fprintf(stderr, "tether bench: %d of its jobs are left; retention prunes them (--keep skips the clean-up)\n", n)
	}
}

// work runs cfg.workers lease-and-settle loops until cfg.jobs jobs are
// settled, and returns the latency of every cycle that got jobs (the lease
// plus the settle).
func work(ctx context.Context, c *client.Client, queue string, queues []string, cfg benchConfig) ([]time.Duration, error) {
	var settled atomic.Int64
	lats := make([][]time.Duration, cfg.workers)
	errs := make([]error, cfg.workers)
	var wg sync.WaitGroup
	for w, id := range workerIDs(queue, cfg.workers) {
		wg.Go(func() {
			lats[w], errs[w] = workLoop(ctx, c, id, queues, cfg, &settled)
		})
	}
	wg.Wait()
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return all, errors.Join(errs...)
}

// workLoop leases and settles until cfg.jobs jobs are settled. Unless
// cfg.serial, it keeps one settle in flight while it leases the next batch,
// as a worker that acknowledges in the background does (River's completer
// persists completions the same way): a job counts only once its settle
// has answered ok.
func workLoop(ctx context.Context, c *client.Client, worker string, queues []string, cfg benchConfig, settled *atomic.Int64) ([]time.Duration, error) {
	var lats []time.Duration
	var pending chan error // the settle in flight, nil if none
	wait := func() error {
		if pending == nil {
			return nil
		}
		err := <-pending
		pending = nil
		return err
	}
	req := client.LeaseRequest{WorkerID: worker, Queues: queues, Max: cfg.batch, WaitMS: 100}
	for settled.Load() < int64(cfg.jobs) {
		t := time.Now()
		jobs, err := c.Lease(ctx, req)
		if err != nil {
			werr := wait() // before lats is read
			return lats, errors.Join(err, werr)
		}
		if err := wait(); err != nil {
			return lats, err
		}
		if len(jobs) == 0 {
			continue
		}
		pending = make(chan error, 1)
		go func(done chan<- error) {
			n, err := settleBatch(ctx, c, jobs)
			lats = append(lats, time.Since(t)) // read only after the last wait
			settled.Add(int64(n))
			done <- err
		}(pending)
		if cfg.serial {
			if err := wait(); err != nil {
				return lats, err
			}
		}
	}
	err := wait()
	return lats, err
}

// settleBatch acks jobs in one settle call and returns how many settled.
func settleBatch(ctx context.Context, c *client.Client, jobs []*client.Job) (int, error) {
	acks := make([]client.Ack, len(jobs))
	for i, j := range jobs {
		acks[i] = client.Ack{ID: j.ID, Token: j.Lease.Token}
	}
	res, err := c.Settle(ctx, acks, nil)
	if err != nil {
		return 0, err
	}
	for _, r := range res {
		if !r.OK {
			return 0, fmt.Errorf("settle %s: %s", r.ID, r.Code)
		}
	}
	return len(res), nil
}

// payload is a JSON object of about size bytes naming job n.
func payload(n, size int) []byte {
	head := fmt.Sprintf(`{"n":%d,"pad":"`, n)
	pad := strings.Repeat("x", max(0, size-len(head)-2))
	return []byte(head + pad + `"}`)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// limitQueues sets the concurrency limit n on every queue of the run.
func limitQueues(ctx context.Context, c *client.Client, queues []string, n int) error {
	for _, q := range queues {
		if err := c.SetQueueLimits(ctx, q, client.QueueLimits{Concurrency: &n}); err != nil {
			return fmt.Errorf("limit queue %s: %w", q, err)
		}
	}
	return nil
}

// unlimitQueues clears the limits limitQueues set, so the run's queues
// leave the listing with their jobs.
func unlimitQueues(ctx context.Context, c *client.Client, queues []string, stderr io.Writer) {
	for _, q := range queues {
		if err := c.ClearQueueLimits(ctx, q); err != nil && !errors.Is(err, client.ErrNotFound) {
			fmt.Fprintf(stderr, "tether bench: clear the limits of %s: %v\n", q, err)
		}
	}
}
