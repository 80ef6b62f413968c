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
	cpuProfile   *os.File // the work phase's CPU profile, when asked for
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
	profile := fs.String("cpuprofile", "", "write a CPU profile of the work phase to this file")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.jobs < 1, c.workers < 1, c.producers < 1:
		return c, errors.New("--jobs, --workers and --producers must be at least 1")
	case c.batch < 1 || c.batch > 1000:
		return c, errors.New("--batch must be 1..1000")
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

	start := time.Now()
	ids, err := produce(ctx, c, queue, cfg)
	if !cfg.keep {
		defer cleanUp(context.WithoutCancel(ctx), c, ids, workerIDs(queue, cfg.workers), stderr)
	}
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	enqueued := time.Since(start)

	// CPU per job of the work phase, ours and the server's (when its
	// /metrics reports it): a figure less at the mercy of a busy machine
	// than the rate.
	serverBefore, serverOK := serverCPU(ctx, c.HTTP, cfg.url, cfg.token)
	clientBefore, clientOK := ownCPU()
	if cfg.cpuProfile != nil {
		if err := pprof.StartCPUProfile(cfg.cpuProfile); err != nil {
			return err
		}
	}
	start = time.Now()
	lat, err := work(ctx, c, queue, cfg)
	if cfg.cpuProfile != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return fmt.Errorf("work: %w", err)
	}
	worked := time.Since(start)
	clientAfter, _ := ownCPU()
	serverAfter, serverAfterOK := serverCPU(ctx, c.HTTP, cfg.url, cfg.token)
	perJob := func(ok bool, d time.Duration) string {
		if !ok {
			return "n/a"
		}
		return fmt.Sprintf("%.0fus", float64(d.Microseconds())/float64(cfg.jobs))
	}
	p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
	fmt.Fprintf(stdout, "tether n=%d producers=%d workers=%d batch=%d enqueue=%.0f jobs/s work=%.0f jobs/s lease+settle p50=%s p99=%s cpu/job client=%s server=%s\n",
		cfg.jobs, cfg.producers, cfg.workers, cfg.batch,
		float64(cfg.jobs)/enqueued.Seconds(), float64(cfg.jobs)/worked.Seconds(), msText(p50), msText(p99),
		perJob(clientOK, clientAfter-clientBefore),
		perJob(serverOK && serverAfterOK, time.Duration((serverAfter-serverBefore)*float64(time.Second))))
	return nil
}

// produce enqueues cfg.jobs jobs in batches of enqueueBatch from
// cfg.producers goroutines, and returns the ids of those it made.
func produce(ctx context.Context, c *client.Client, queue string, cfg benchConfig) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx) // one failure stops every producer
	defer cancel()
	batches := make(chan int) // the first job number of each batch
	go func() {
		defer close(batches)
		for i := 0; i < cfg.jobs; i += enqueueBatch {
			select {
			case batches <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	errs := make(chan error, cfg.producers)
	var mu sync.Mutex
	ids := make([]string, 0, cfg.jobs)
	var wg sync.WaitGroup
	for range cfg.producers {
		wg.Go(func() {
			for first := range batches {
				specs := make([]client.JobSpec, 0, enqueueBatch)
				for n := first; n < min(first+enqueueBatch, cfg.jobs); n++ {
					specs = append(specs, client.JobSpec{Kind: "bench", Queue: queue, Payload: payload(n, cfg.payloadBytes)})
				}
				jobs, err := c.EnqueueBatch(ctx, specs)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				mu.Lock()
				for _, j := range jobs {
					ids = append(ids, j.ID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	return ids, <-errs // the first failure, nil if none
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
func work(ctx context.Context, c *client.Client, queue string, cfg benchConfig) ([]time.Duration, error) {
	var settled atomic.Int64
	lats := make([][]time.Duration, cfg.workers)
	errs := make([]error, cfg.workers)
	var wg sync.WaitGroup
	for w, id := range workerIDs(queue, cfg.workers) {
		wg.Go(func() {
			lats[w], errs[w] = workLoop(ctx, c, id, queue, cfg, &settled)
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
func workLoop(ctx context.Context, c *client.Client, worker, queue string, cfg benchConfig, settled *atomic.Int64) ([]time.Duration, error) {
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
	req := client.LeaseRequest{WorkerID: worker, Queues: []string{queue}, Max: cfg.batch, WaitMS: 100}
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
