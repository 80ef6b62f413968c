package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
	"github.com/tetherq/tether/store"
)

// Each way a handler can return settles the job as the Handler doc says.
func TestRunnerOutcomes(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	tests := []struct {
		name    string
		result  json.RawMessage
		err     error
		panics  bool
		end     client.End
		state   string // the job's state after the settle
		attempt int
		reason  string // dead_reason
		lastErr string // in last_error
		later   bool   // run_at an hour or so away
	}{
		{name: "result", result: json.RawMessage(`{"n":2}`), end: client.EndAcked, state: "succeeded", attempt: 1},
		{name: "no-result", end: client.EndAcked, state: "succeeded", attempt: 1},
		{name: "error", err: errors.New("boom"), end: client.EndFailed, state: "scheduled", attempt: 1, lastErr: "boom"},
		{name: "permanent", err: client.Permanent(errors.New("bad payload")), end: client.EndFailed,
			state: "dead", attempt: 1, reason: "failed_permanently", lastErr: "bad payload"},
		{name: "retry-in", err: client.RetryIn(time.Hour, errors.New("rate limited")), end: client.EndFailed,
			state: "scheduled", attempt: 1, lastErr: "rate limited", later: true},
		{name: "snooze", err: client.Snooze(time.Hour), end: client.EndReleased, state: "scheduled", attempt: 0, later: true},
		{name: "panic", panics: true, end: client.EndFailed, state: "scheduled", attempt: 1, lastErr: "panic: oops"},
		// Over the server's 1 MiB body limit: the ack's 413 becomes a fail.
		{name: "too-large", result: json.RawMessage(`"` + strings.Repeat("x", 2<<20) + `"`), end: client.EndFailed,
			state: "dead", attempt: 1, reason: "failed_permanently", lastErr: "over the server's request limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := s.enqueue(t, tt.name, "k", time.Hour)
			r := s.runner(t, tt.name, func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
				if tt.panics {
					panic("oops")
				}
				return tt.result, tt.err
			})
			out, err := r.RunOnce(t.Context(), 5*time.Second)
			if err != nil || out == nil {
				t.Fatalf("RunOnce = %+v, %v", out, err)
			}
			j := s.job(t, id)
			if out.End != tt.end || j.State != tt.state || j.Attempt != tt.attempt {
				t.Errorf("end %s, job %s attempt %d; want %s, %s attempt %d", out.End, j.State, j.Attempt, tt.end, tt.state, tt.attempt)
			}
			if tt.reason != "" && (j.DeadReason == nil || *j.DeadReason != tt.reason) {
				t.Errorf("dead_reason = %v, want %s", j.DeadReason, tt.reason)
			}
			if tt.lastErr != "" && (j.LastError == nil || !strings.Contains(*j.LastError, tt.lastErr)) {
				t.Errorf("last_error = %v, want it to hold %q", j.LastError, tt.lastErr)
			}
			if tt.later != j.RunAt.After(time.Now().Add(50*time.Minute)) {
				t.Errorf("run_at %v: an hour away is %v", j.RunAt, tt.later)
			}
			if tt.end == client.EndAcked && string(j.Result) != string(orNull(tt.result)) {
				t.Errorf("result = %s, want %s", j.Result, orNull(tt.result))
			}
			if out.Job == nil || out.Job.ID != id || out.Job.State != tt.state {
				t.Errorf("outcome's job = %+v, want the job as settled", out.Job)
			}
			if slices.Contains(s.workers(t), "w-"+tt.name) {
				t.Errorf("worker w-%s still registered after RunOnce", tt.name)
			}
		})
	}
}

func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}

func TestRunOnceNoJob(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	r := s.runner(t, "empty", func(context.Context, *client.Job) (json.RawMessage, error) {
		t.Error("handler called without a job")
		return nil, nil
	})
	out, err := r.RunOnce(t.Context(), 100*time.Millisecond)
	if out != nil || err != nil {
		t.Fatalf("RunOnce on an empty queue = %+v, %v; want nil, nil", out, err)
	}
	if len(s.calls("/v1/lease")) == 0 || len(s.calls("DELETE /v1/workers/w-empty")) != 1 {
		t.Errorf("requests: %+v; want a lease and a deregistration", s.seen)
	}
}

// Concurrency bounds the handlers running at once, and the runner leases
// no job it has no slot for.
func TestRunnerConcurrency(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	var ids []string
	for range 5 {
		ids = append(ids, s.enqueue(t, "conc", "k", time.Hour))
	}
	start, finish := make(started, 5), make(chan struct{})
	var running, most atomic.Int32
	r := s.runner(t, "conc", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		start <- j.ID
		<-finish
		return nil, nil
	})
	r.Concurrency = 3
	stop := runAsync(t, r)
	for range 3 {
		start.wait(t)
	}
	states := map[string]int{}
	for _, id := range ids {
		states[s.job(t, id).State]++
	}
	if states["running"] != 3 || states["available"] != 2 {
		t.Errorf("with 3 handlers busy the jobs are %v; want 3 running, 2 available", states)
	}
	close(finish)
	start.wait(t)
	start.wait(t)
	s.await(t, "5 acks", func() bool { return len(s.calls("/ack")) == 5 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if j := s.job(t, id); j.State != "succeeded" {
			t.Errorf("job %s is %s, want succeeded", id, j.State)
		}
	}
	if most.Load() != 3 {
		t.Errorf("at most %d handlers ran at once, want 3", most.Load())
	}
}

// A cancel request reaches the handler's ctx from the heartbeat's cancel
// list, and from an extend's cancel_requested; the fail that follows ends
// the job cancelled.
func TestRunnerCancel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		heartbeat time.Duration // the server's interval
		timeout   time.Duration // the job's: extends come at a third of it
	}{
		{"heartbeat", 20 * time.Millisecond, time.Hour},
		{"extend", time.Hour, 300 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, tt.heartbeat)
			id := s.enqueue(t, "cancel", "k", tt.timeout)
			start := make(started, 1)
			var cause error
			r := s.runner(t, "cancel", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
				start <- j.ID
				<-ctx.Done()
				cause = context.Cause(ctx)
				return nil, errors.New("stopped: " + cause.Error())
			})
			res := make(chan *client.Outcome, 1)
			go func() {
				out, err := r.RunOnce(t.Context(), 5*time.Second)
				if err != nil {
					t.Error(err)
				}
				res <- out
			}()
			start.wait(t)
			s.post(t, "POST", "/v1/jobs/"+id+"/cancel")
			out := <-res
			if !errors.Is(cause, client.ErrCancelRequested) || out.End != client.EndFailed {
				t.Errorf("cause %v, end %s; want ErrCancelRequested and failed", cause, out.End)
			}
			if j := s.job(t, id); j.State != "cancelled" || j.Attempts[0].Outcome != "cancelled" {
				t.Errorf("job %s, attempt %s; want cancelled", j.State, j.Attempts[0].Outcome)
			}
		})
	}
}

// A lease taken from the worker ends the handler's ctx with ErrLeaseLost,
// and the runner never settles that job: from the heartbeat's lost list
// (the job timed out) or from an extend's 409 (the worker was
// deregistered, which released it).
func TestRunnerLostLease(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		heartbeat time.Duration
		timeout   time.Duration
		take      func(t *testing.T, s *server, id string)
	}{
		{"heartbeat", 20 * time.Millisecond, time.Hour, func(t *testing.T, s *server, id string) {
			reap(t, s, time.Now().Add(2*time.Hour))
		}},
		{"extend", time.Hour, 300 * time.Millisecond, func(t *testing.T, s *server, id string) {
			s.post(t, "DELETE", "/v1/workers/w-lost")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, tt.heartbeat)
			id := s.enqueue(t, "lost", "k", tt.timeout)
			start := make(started, 1)
			var cause error
			r := s.runner(t, "lost", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
				start <- j.ID
				<-ctx.Done()
				cause = context.Cause(ctx)
				return json.RawMessage(`"late"`), nil // would ack, were it settled
			})
			res := make(chan *client.Outcome, 1)
			go func() {
				out, _ := r.RunOnce(t.Context(), 5*time.Second)
				res <- out
			}()
			start.wait(t)
			tt.take(t, s, id)
			out := <-res
			if !errors.Is(cause, client.ErrLeaseLost) || out.End != client.EndLost {
				t.Errorf("cause %v, end %s; want ErrLeaseLost and lost", cause, out.End)
			}
			for _, verb := range []string{"/ack", "/fail", "/release"} {
				if n := len(s.calls(verb)); n != 0 {
					t.Errorf("the runner sent %d %s after losing the lease", n, verb)
				}
			}
			if j := s.job(t, id); j.State == "succeeded" {
				t.Errorf("the lost job was settled: %+v", j)
			}
		})
	}
}

// reap times out every running job as of now.
func reap(t *testing.T, s *server, now time.Time) {
	t.Helper()
	if _, err := s.st.JobReap(t.Context(), &store.JobReapParams{Limit: 100, Now: now}); err != nil {
		t.Fatal(err)
	}
}

// The runner extends a job's lease at a third of its length, so a job runs
// past its timeout_ms: after three extends (a whole timeout later) a reap
// finds nothing to time out. Progress reported by the handler goes out
// with an extend at once.
func TestRunnerExtends(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Hour)
	id := s.enqueue(t, "long", "k", 1200*time.Millisecond)
	proceed := make(chan struct{})
	r := s.runner(t, "long", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
		client.ReportProgress(ctx, 40)
		<-proceed
		return nil, nil
	})
	res := make(chan *client.Outcome, 1)
	go func() {
		out, _ := r.RunOnce(t.Context(), 5*time.Second)
		res <- out
	}()
	s.await(t, "extend with progress", func() bool {
		ext := s.calls("/extend")
		return len(ext) > 0 && strings.Contains(ext[0].body, `"progress":40`)
	})
	if p := s.job(t, id).Progress; p == nil || *p != 40 {
		t.Errorf("progress = %v, want 40", p)
	}
	s.await(t, "three more extends", func() bool { return len(s.calls("/extend")) >= 4 })
	reap(t, s, time.Now())
	close(proceed)
	out := <-res
	if out.End != client.EndAcked || len(s.job(t, id).Attempts) != 1 {
		t.Errorf("end %s with attempts %+v; want acked on the first", out.End, s.job(t, id).Attempts)
	}
	ext := s.calls("/extend")
	for i := 2; i < len(ext); i++ {
		if gap := ext[i].at.Sub(ext[i-1].at); gap < 400*time.Millisecond {
			t.Errorf("extends %d and %d %v apart; want a third of 1.2s", i-1, i, gap)
		}
	}
}

// A stop gives the handlers Grace: one that finishes in time is acked; one
// that does not has its ctx ended with ErrShutdown and its job released,
// its attempt refunded; then the worker is deregistered.
func TestRunnerShutdown(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	quick, stubborn := s.enqueue(t, "stop", "quick", time.Hour), s.enqueue(t, "stop", "stubborn", time.Hour)
	start := make(started, 2)
	var cause error
	r := s.runner(t, "stop", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
		start <- j.ID
		if j.Kind == "quick" {
			<-client.Draining(ctx)
			return json.RawMessage(`"finished"`), nil
		}
		<-ctx.Done()
		cause = context.Cause(ctx)
		return nil, ctx.Err()
	})
	r.Concurrency, r.Grace = 2, 200*time.Millisecond
	stop := runAsync(t, r)
	start.wait(t)
	start.wait(t)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if j := s.job(t, quick); j.State != "succeeded" || string(j.Result) != `"finished"` {
		t.Errorf("the job that finished in the grace: %s %s, want succeeded", j.State, j.Result)
	}
	j := s.job(t, stubborn)
	if !errors.Is(cause, client.ErrShutdown) || j.State != "available" || j.Attempt != 0 || j.Attempts[0].Outcome != "released" {
		t.Errorf("the job that outlived the grace: cause %v, %s attempt %d; want ErrShutdown, available attempt 0 released",
			cause, j.State, j.Attempt)
	}
	if ws := s.workers(t); len(ws) != 0 {
		t.Errorf("workers after the stop: %v, want none", ws)
	}
}
