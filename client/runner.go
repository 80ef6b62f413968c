package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"
)

// Handler does one job and returns the result to ack it with (nil acks
// with no result), or an error: Permanent(err) fails it for good,
// RetryIn(d, err) fails it with its next attempt after d, Snooze(d)
// releases it without spending an attempt, and any other error fails it
// with the job's backoff. A panic fails it like an error.
//
// ctx ends when the job's cancellation is requested, when its lease is
// lost, or when the runner's shutdown grace runs out; context.Cause(ctx) is
// ErrCancelRequested, ErrLeaseLost or ErrShutdown. A handler must return
// soon after ctx ends: its concurrency slot is held until it does, and the
// runner waits for it when stopping. Draining(ctx) tells it that the runner
// is stopping, ReportProgress and ExtendLease speak to the server for it.
type Handler func(ctx context.Context, job *Job) (json.RawMessage, error)

// Runner is a worker: it leases jobs from its queues and runs Handler on
// each, up to Concurrency at once. It registers the worker, heartbeats at
// the rhythm the server asks for, and extends each job's lease every third
// of its length, so a job may run far longer than its timeout_ms. A call
// that gets no answer (or 429, or 5xx such as 503 unavailable) is retried
// with a jittered backoff, 100 ms doubling to 10 s; a settle is retried
// until the server answers it, which is safe: a repeated ack, fail or
// release under the same token answers 200. A 409 lease_lost ends that
// job's story: it was taken from this worker.
//
// Set the fields before Run; a Runner runs once at a time.
type Runner struct {
	// Client talks to the server (required). Its HTTP client needs no
	// Timeout: the runner bounds every call itself, long-polls included,
	// and wants a Transport with MaxIdleConnsPerHost above Concurrency.
	Client *Client
	// Handler runs each job (required).
	Handler Handler
	// Queues to lease from; default ["default"].
	Queues []string
	// Kinds, when set, are the only kinds leased.
	Kinds []string
	// Concurrency is how many handlers run at once: 1 (the default) to
	// 1000.
	Concurrency int
	// WorkerID names the worker; default host:pid:random.
	WorkerID string
	// Labels describe the worker in GET /v1/workers.
	Labels map[string]string
	// Grace is how long handlers may go on after Run's ctx ends before
	// their own ctx ends with ErrShutdown; default DefaultGrace.
	Grace time.Duration
	// Logger gets a line per job's end, per call that failed, and at
	// start and stop; nil logs nothing.
	Logger *slog.Logger

	cleanup time.Duration // cleanupTimeout, shorter in tests
}

// DefaultGrace is the Runner's default Grace: under the 30 s a container
// orchestrator usually allows between SIGTERM and SIGKILL, leaving time
// to release the jobs and deregister.
const DefaultGrace = 25 * time.Second

const (
	// leaseWait is each long-poll's wait_ms: the most the API allows.
	leaseWait = 30 * time.Second
	// callTimeout bounds each call but a long-poll, which gets it on top
	// of its wait: a call to a server that stopped answering is abandoned
	// and retried rather than waited on for ever.
	callTimeout = 10 * time.Second
	// cleanupTimeout is what the last settles, releases and the
	// deregistration get once the shutdown grace has run out; a server
	// still silent by then rescues the jobs after its dead_after.
	cleanupTimeout = 10 * time.Second
	// defaultHeartbeat paces heartbeats until the server names its own
	// interval (the server's default).
	defaultHeartbeat = 5 * time.Second
)

// Run registers the worker and works until ctx ends or the server refuses
// the runner's token. Then it stops leasing, lets the running handlers
// finish for Grace, ends their ctx, releases what they leave unsettled,
// deregisters the worker (which releases any job it still holds) and
// returns. It returns nil after a stop by ctx, and the server's error when
// it refused the token (401, 403), the registration or the lease (400).
func (r *Runner) Run(ctx context.Context) error {
	_, err := r.run(ctx, false, 0)
	return err
}

// RunOnce registers the worker, leases at most one job, waiting up to wait
// for it, runs it and deregisters. It returns how the job ended, or a nil
// Outcome when none came in time. ctx ending stops it as it stops Run.
func (r *Runner) RunOnce(ctx context.Context, wait time.Duration) (*Outcome, error) {
	return r.run(ctx, true, wait)
}

func (r *Runner) run(ctx context.Context, once bool, wait time.Duration) (*Outcome, error) {
	if r.Client == nil || r.Handler == nil {
		return nil, errors.New("tether: Runner needs a Client and a Handler")
	}
	s, err := r.register(ctx)
	if s == nil {
		return nil, err
	}
	// A fatal answer stops leasing as ctx would, keeping the error.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s.stop = stop
	beat, stopBeat := context.WithCancel(context.WithoutCancel(ctx))
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		s.heartbeats(beat)
	}()
	if once {
		s.leaseOne(ctx, wait)
	} else {
		s.leaseLoop(ctx)
	}
	s.drain(ctx)
	stopBeat()
	<-beating
	s.deregister()
	return s.outcome, s.failure()
}

// register makes the worker known to the server, retrying what is worth
// retrying. A nil session means ctx ended first (err nil) or the server
// refused (err set).
func (r *Runner) register(ctx context.Context) (*session, error) {
	s := newSession(r)
	var b backoff
	for {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		reg, err := r.Client.RegisterWorker(cctx, WorkerRegistration{ID: s.id, Queues: s.queues, Labels: r.Labels})
		cancel()
		if err == nil {
			s.setInterval(reg.HeartbeatIntervalMS)
			s.log.Info("worker registered", "worker", s.id, "queues", s.queues,
				"concurrency", cap(s.slots), "heartbeat_interval_ms", reg.HeartbeatIntervalMS)
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if !retryable(err) {
			return nil, fmt.Errorf("register worker %q: %w", s.id, err)
		}
		d := b.delay(err)
		s.log.Warn("register failed, retrying", "worker", s.id, "err", err, "retry_in", d)
		if !sleep(ctx, d) {
			return nil, nil
		}
	}
}

// deregister removes the worker, which releases any job it still holds
// (leased by a long-poll abandoned at the stop, or whose settle gave up).
func (s *session) deregister() {
	ctx, cancel := context.WithTimeout(context.Background(), s.cleanup)
	defer cancel()
	var b backoff
	for {
		cctx, cancelCall := context.WithTimeout(ctx, callTimeout)
		err := s.c.DeregisterWorker(cctx, s.id)
		cancelCall()
		if err == nil || errors.Is(err, ErrNotFound) {
			s.log.Info("worker deregistered", "worker", s.id)
			return
		}
		if !retryable(err) || !sleep(ctx, b.delay(err)) {
			s.log.Warn("deregister failed; the server rescues the worker's jobs after its dead_after", "worker", s.id, "err", err)
			return
		}
	}
}

// drain waits for the running jobs. Once ctx ends it tells the handlers
// (Draining), gives them Grace, then ends their ctx with ErrShutdown and
// gives the last settles cleanupTimeout.
func (s *session) drain(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.tasks.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	close(s.draining)
	s.log.Info("stopping: leasing ended, waiting for running jobs", "jobs", len(s.heldIDs()), "grace", s.grace)
	grace := time.NewTimer(s.grace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}
	s.cancelAll(ErrShutdown)
	giveUp := time.AfterFunc(s.cleanup, s.giveUp)
	defer giveUp.Stop()
	<-done
}

// defaultWorkerID is host:pid:random, unique across restarts of a process
// that keeps its pid (a container's 1).
func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b)
}
