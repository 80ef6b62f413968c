package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/client"
)

// A settle whose answer is lost is sent again under the same token until
// the server answers, and the repeat is answered 200: the job ends as the
// handler said, once.
func TestRunnerSettleRetried(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		verb  string
		err   error
		state string
	}{
		{"ack", nil, "succeeded"},
		{"fail", errors.New("boom"), "scheduled"},
		{"release", client.Snooze(0), "available"},
	} {
		t.Run(tt.verb, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, time.Second)
			id := s.enqueue(t, tt.verb, "k", time.Hour)
			lost := 0
			s.setFault(func(r *http.Request, _ []byte) fault {
				if strings.HasSuffix(r.URL.Path, "/"+tt.verb) && lost < 2 {
					lost++
					return loseIt
				}
				return serve
			})
			r := s.runner(t, tt.verb, func(context.Context, *client.Job) (json.RawMessage, error) { return nil, tt.err })
			out, err := r.RunOnce(t.Context(), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			calls := s.calls("/" + tt.verb)
			if len(calls) != 3 || calls[0].body != calls[2].body {
				t.Errorf("%d %s calls %+v; want 3 alike, the answers of two lost", len(calls), tt.verb, calls)
			}
			j := s.job(t, id)
			if out.End == client.EndLost || out.End == client.EndUnsettled || j.State != tt.state || len(j.Attempts) != 1 {
				t.Errorf("end %s, job %s with %d attempts; want %s after one attempt", out.End, j.State, len(j.Attempts), tt.state)
			}
		})
	}
}

// Calls that get no answer, or 503, are retried at a jittered pace of
// 100 ms doubling (never a hot loop), a Retry-After is honoured, and the
// runner carries on once the server is back.
func TestRunnerBackoff(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	id := s.enqueue(t, "flaky", "k", time.Hour)
	faults := []fault{drop, down, drop, down, downSlow}
	s.setFault(func(r *http.Request, _ []byte) fault {
		if r.URL.Path != "/v1/lease" || len(faults) == 0 {
			return serve
		}
		f := faults[0]
		faults = faults[1:]
		return f
	})
	r := s.runner(t, "flaky", func(context.Context, *client.Job) (json.RawMessage, error) { return nil, nil })
	out, err := r.RunOnce(t.Context(), 30*time.Second)
	if err != nil || out == nil || out.End != client.EndAcked || s.job(t, id).State != "succeeded" {
		t.Fatalf("RunOnce = %+v, %v; want the job acked once the server is back", out, err)
	}
	leases := s.calls("/v1/lease")
	if len(leases) != 6 {
		t.Fatalf("%d lease calls, want 5 refused and 1 served", len(leases))
	}
	// The nth retry waits 100 ms · 2^(n-1), ±20 %; after the Retry-After: 1, a second.
	for i, want := range []time.Duration{80, 160, 320, 640, 800} {
		want *= time.Millisecond
		if i == 4 {
			want = time.Second
		}
		if gap := leases[i+1].at.Sub(leases[i].at); gap < want {
			t.Errorf("retry %d came %v after the failure, want at least %v", i+1, gap, want)
		}
	}
}

// A token the server refuses stops the runner at once with the server's
// error: 401 for an unknown token, 403 for a role that may not lease.
func TestRunnerRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second, api.Token{Secret: "producer-secret-0123", Role: api.RoleProducer})
	for token, status := range map[string]int{"wrong-secret-0123456": 401, "producer-secret-0123": 403} {
		c := *s.c
		c.Token = token
		r := s.runner(t, "refused", func(context.Context, *client.Job) (json.RawMessage, error) { return nil, nil })
		r.Client = &c
		err := r.Run(t.Context())
		var e *client.Error
		if !errors.As(err, &e) || e.Status != status {
			t.Errorf("Run with token %s = %v, want %d", token, err, status)
		}
	}
}

// Every loop retries what got no answer or a 503: the registration, the
// heartbeat (sooner than its next beat) and the extend alike.
func TestRunnerRetriesEveryCall(t *testing.T) {
	t.Parallel()
	s := newServer(t, 300*time.Millisecond)
	s.setFault(faults(failFirst("/v1/workers", 1, drop), failFirst("/heartbeat", 2, down), failFirst("/extend", 2, drop)))
	id := s.enqueue(t, "retries", "k", 600*time.Millisecond)
	r := s.runner(t, "retries", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
		s.await(t, "served extends and heartbeats", func() bool {
			return len(s.calls("/extend")) >= 3 && len(s.calls("/heartbeat")) >= 3
		})
		return nil, nil
	})
	out, err := r.RunOnce(t.Context(), 5*time.Second)
	if err != nil || out.End != client.EndAcked || s.job(t, id).State != "succeeded" {
		t.Fatalf("RunOnce = %+v, %v; want the job acked", out, err)
	}
	if n := len(s.calls("POST /v1/workers")); n != 2 {
		t.Errorf("%d registrations, want the dropped one and its retry", n)
	}
	beats := s.calls("/heartbeat")
	// The retries of a failed beat come at the backoff's pace (100 ms,
	// 200 ms), not the 300 ms interval.
	if gap := beats[1].at.Sub(beats[0].at); gap < 80*time.Millisecond || gap > 280*time.Millisecond {
		t.Errorf("the first heartbeat retry came %v after the failure, want about 100ms", gap)
	}
}

// A token refused in the middle of a run (a heartbeat's or an extend's
// 401) stops the runner with the server's error; the running job is
// released as at any stop.
func TestRunnerRefusedMidRun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, path string
		heartbeat  time.Duration
		timeout    time.Duration
	}{
		{"heartbeat", "/heartbeat", 50 * time.Millisecond, time.Hour},
		{"extend", "/extend", time.Hour, 300 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, tt.heartbeat)
			id := s.enqueue(t, "revoked", "k", tt.timeout)
			started := make(started, 1)
			r := s.runner(t, "revoked", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
				started <- j.ID
				<-ctx.Done()
				return nil, ctx.Err()
			})
			r.Grace = 50 * time.Millisecond
			res := make(chan error, 1)
			go func() { res <- r.Run(t.Context()) }()
			started.wait(t)
			s.setFault(failFirst(tt.path, 1000, refuse))
			var e *client.Error
			if err := <-res; !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
				t.Errorf("Run = %v, want the 401", err)
			}
			if j := s.job(t, id); j.State != "available" || j.Attempt != 0 {
				t.Errorf("job %s attempt %d, want released", j.State, j.Attempt)
			}
		})
	}
}

// A lease the server calls invalid (a bad kind) stops the runner: the
// same request would be refused again.
func TestRunnerInvalidLease(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	r := s.runner(t, "invalid", func(context.Context, *client.Job) (json.RawMessage, error) { return nil, nil })
	r.Kinds = []string{"not a kind!"}
	var e *client.Error
	if err := r.Run(t.Context()); !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.HasPrefix(e.Field, "kinds") {
		t.Errorf("Run = %#v, want 400 naming kinds", err)
	}
	if n := len(s.calls("/v1/lease")); n != 1 {
		t.Errorf("%d lease calls, want 1: a 400 is not retried", n)
	}
}

// A settle the server refuses with a 4xx other than 409 and 404 is not
// retried: the job is left unsettled, for the server's timeout or the
// deregistration to end.
func TestRunnerSettleRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	id := s.enqueue(t, "refused-ack", "k", time.Hour)
	s.setFault(failFirst("/ack", 1000, invalid))
	r := s.runner(t, "refused-ack", func(context.Context, *client.Job) (json.RawMessage, error) { return nil, nil })
	out, err := r.RunOnce(t.Context(), 5*time.Second)
	if err != nil || out.End != client.EndUnsettled || len(s.calls("/ack")) != 1 {
		t.Errorf("RunOnce = %+v, %v after %d acks; want unsettled after one", out, err, len(s.calls("/ack")))
	}
	if j := s.job(t, id); j.State != "available" || j.Attempts[0].Outcome != "released" {
		t.Errorf("job %s, want released by the deregistration", j.State)
	}
}

// With the server silent, a stop does not wait for ever: the last settles
// and the deregistration give up once the cleanup time after the grace
// has passed.
func TestRunnerStopGivesUp(t *testing.T) {
	t.Parallel()
	s := newServer(t, time.Second)
	s.enqueue(t, "silent", "k", time.Hour)
	started := make(started, 1)
	r := s.runner(t, "silent", func(ctx context.Context, j *client.Job) (json.RawMessage, error) {
		started <- j.ID
		<-client.Draining(ctx)
		s.setFault(func(*http.Request, []byte) fault { return down })
		return nil, nil
	})
	r.Grace = 50 * time.Millisecond
	client.SetCleanup(r, 300*time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan *client.Outcome, 1)
	go func() {
		out, _ := r.RunOnce(ctx, 5*time.Second)
		res <- out
	}()
	started.wait(t)
	stopped := time.Now()
	cancel()
	select {
	case out := <-res:
		if out.End != client.EndUnsettled || len(s.calls("/ack")) < 2 {
			t.Errorf("end %s after %d acks, want unsettled after retries", out.End, len(s.calls("/ack")))
		}
		t.Logf("stopped %v after the cancel", time.Since(stopped))
	case <-time.After(20 * time.Second):
		t.Fatal("RunOnce still running 20s after its ctx ended, the server silent")
	}
}
