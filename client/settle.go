package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// action is how a job is to be settled: an ack, a fail or a release.
type action struct {
	end    End
	result json.RawMessage // ack
	fail   Fail            // fail (no token: settle adds it)
	delay  time.Duration   // release
	err    error           // the handler's error
}

// maxErrorBytes is the most of a handler's error sent with a fail, the
// server's own cap: a longer text would only risk 413.
const maxErrorBytes = 64 << 10

// maxDelay is the API's bound on retry_in_ms and a release's delay_ms.
const maxDelay = 365 * 24 * time.Hour

func failed(err error, retry bool, in *time.Duration) action {
	msg := errText(err)
	if len(msg) > maxErrorBytes {
		msg = msg[:maxErrorBytes]
	}
	a := action{end: EndFailed, fail: Fail{Error: msg, Retry: &retry}, err: err}
	if in != nil {
		ms := min(max(*in, 0), maxDelay).Milliseconds()
		a.fail.RetryInMS = &ms
	}
	return a
}

func release(d time.Duration, err error) action {
	return action{end: EndReleased, delay: min(max(d, 0), maxDelay), err: err}
}

// decide maps a handler's return to the settle (see Handler).
func decide(t *task, res json.RawMessage, err error) action {
	if err == nil {
		return action{end: EndAcked, result: res}
	}
	if errors.Is(context.Cause(t.ctx), ErrShutdown) {
		return release(0, err)
	}
	var (
		snooze *snoozeError
		perm   *permanentError
		later  *retryInError
	)
	switch {
	case errors.As(err, &snooze):
		return release(snooze.after, err)
	case errors.As(err, &perm):
		return failed(err, false, nil)
	case errors.As(err, &later):
		return failed(err, true, &later.after)
	default:
		return failed(err, true, nil)
	}
}

// settle sends a until the server answers it. A 409 or 404 means the job
// was taken from this worker; an ack refused as too large (413) becomes a
// permanent fail saying so. Retries end with the stop's cleanup time.
func (s *session) settle(t *task, a action) *Outcome {
	var b backoff
	for {
		job, err := s.send(t, a)
		var e *Error
		switch {
		case err == nil:
			s.logEnd(t, a)
			return &Outcome{Job: job, End: a.end, Err: a.err}
		case isLost(err):
			s.log.Warn("job lost: its lease was taken before the settle", "job", t.job.ID, "kind", t.job.Kind, "settle", a.end, "err", err)
			return &Outcome{Job: t.job, End: EndLost, Err: a.err}
		case a.end == EndAcked && errors.As(err, &e) && e.Status == http.StatusRequestEntityTooLarge:
			a = failed(fmt.Errorf("the result (%d bytes) is over the server's request limit", len(a.result)), false, nil)
			continue
		case !retryable(err):
			if refused(err) {
				s.fatal(fmt.Errorf("settle job %s: %w", t.job.ID, err))
			}
			s.log.Error("job unsettled: the server refused the settle", "job", t.job.ID, "settle", a.end, "err", err)
			return &Outcome{Job: t.job, End: EndUnsettled, Err: a.err}
		}
		d := b.delay(err)
		s.log.Warn("settle failed, retrying", "job", t.job.ID, "settle", a.end, "err", err, "retry_in", d)
		if !sleep(s.settleCtx, d) {
			s.log.Error("job unsettled: the server did not answer before the stop ran out", "job", t.job.ID, "settle", a.end)
			return &Outcome{Job: t.job, End: EndUnsettled, Err: a.err}
		}
	}
}

// send makes one settle call of a.
func (s *session) send(t *task, a action) (*Job, error) {
	ctx, cancel := context.WithTimeout(s.settleCtx, callTimeout)
	defer cancel()
	id, token := t.job.ID, t.job.Lease.Token
	switch a.end {
	case EndAcked:
		return s.c.Ack(ctx, id, token, a.result)
	case EndFailed:
		f := a.fail
		f.Token = token
		return s.c.Fail(ctx, id, f)
	default:
		return s.c.Release(ctx, id, token, a.delay.Milliseconds())
	}
}

func (s *session) logEnd(t *task, a action) {
	attrs := []any{"job", t.job.ID, "kind", t.job.Kind, "attempt", t.job.Attempt}
	switch a.end {
	case EndAcked:
		s.log.Info("job acked", attrs...)
	case EndFailed:
		s.log.Warn("job failed", append(attrs, "retry", *a.fail.Retry, "err", a.fail.Error)...)
	default:
		if a.err != nil {
			attrs = append(attrs, "err", a.err)
		}
		s.log.Info("job released", append(attrs, "delay", a.delay)...)
	}
}
