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
