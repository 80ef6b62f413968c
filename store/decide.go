package store

import (
	"math/rand/v2"
	"time"
)

// Ending is how a delivery ended without an ack.
type Ending int

// The endings of the failure-decision table.
const (
	EndFail          Ending = iota // fail, retry allowed
	EndFailPermanent               // fail with retry: false
	EndOrphaned                    // the owner died
	EndTimedOut                    // the lease expired
	EndRelease                     // the worker gave the job back
)

// EndedBy is what ended a delivery (besides an ack), kept on the job
// (ended_by) with the delivery's token, so that a fail or release repeated
// under that token is told from a stale one. The Redis scripts write the
// same strings.
type EndedBy string

const (
	EndedByFail       EndedBy = "fail"
	EndedByRelease    EndedBy = "release"
	EndedByRescue     EndedBy = "rescue"
	EndedByReap       EndedBy = "reap"
	EndedByDeregister EndedBy = "deregister"
)

// Decision is the next state of a job whose delivery ended without an ack.
type Decision struct {
	State      State
	RunAt      time.Time // when State is available or scheduled
	DeadReason *DeadReason
	Outcome    Outcome // the closing outcome of the attempt
	Attempt    int     // the job's attempt counter after the decision
	Rescues    int
}

// DecideParams are the facts Decide needs.
type DecideParams struct {
	Ending          Ending
	Attempt         int // the attempt that just ended
	MaxAttempts     int
	Rescues         int // before this ending
	MaxRescues      int // 0: DefaultMaxRescues
	CancelRequested bool
	Backoff         Backoff
	RetryIn         *time.Duration // fail's retry_in_ms, release's delay_ms
	RunAt           time.Time      // the job's run_at: its place in the queue
	Now             time.Time
}

// Decide applies the failure-decision table of the API, in its order:
// release (cancelled instead when cancellation was requested), cancel
// requested, permanent failure, orphaned, timed out, failed. Every backend
// calls it (or mirrors it exactly), so they all agree.
//
// A job that goes back in the queue at once because its handler did not
// fail (a rescue, a release without a delay) keeps its run_at, so it keeps
// its place ahead of the jobs enqueued after it; a retry after a failure
// waits from now.
func Decide(p DecideParams) Decision {
	d := Decision{Attempt: p.Attempt, Rescues: p.Rescues, RunAt: p.Now}
	dead := func(r DeadReason) Decision {
		d.State, d.DeadReason = StateDead, &r
		return d
	}
	switch {
	case p.Ending == EndRelease:
		d.Outcome, d.Attempt = OutcomeReleased, p.Attempt-1
		switch {
		case p.CancelRequested:
			d.Outcome, d.State = OutcomeCancelled, StateCancelled
		case p.RetryIn != nil && *p.RetryIn > 0:
			d.State, d.RunAt = StateScheduled, p.Now.Add(*p.RetryIn)
		default:
			d.State, d.RunAt = StateAvailable, keptPlace(p)
		}
		return d
	case p.CancelRequested:
		d.Outcome, d.State = OutcomeCancelled, StateCancelled
		if p.Ending == EndOrphaned {
			d.Rescues++
		}
		return d
	case p.Ending == EndFailPermanent:
		d.Outcome = OutcomeFailed
		return dead(DeadFailedPermanently)
	case p.Ending == EndOrphaned:
		d.Outcome, d.Rescues = OutcomeOrphaned, p.Rescues+1
		maxRescues := p.MaxRescues
		if maxRescues <= 0 {
			maxRescues = DefaultMaxRescues
		}
		if d.Rescues >= maxRescues {
			return dead(DeadCrashLoop)
		}
		if p.Attempt >= p.MaxAttempts {
			return dead(DeadAttemptsExhausted)
		}
		d.State, d.RunAt = StateAvailable, keptPlace(p)
		return d
	case p.Ending == EndTimedOut:
		d.Outcome = OutcomeTimedOut
		if p.Attempt >= p.MaxAttempts {
			return dead(DeadTimeoutExhausted)
		}
	default:
		d.Outcome = OutcomeFailed
		if p.Attempt >= p.MaxAttempts {
			return dead(DeadAttemptsExhausted)
		}
	}
	delay := BackoffDelay(p.Backoff, p.Attempt)
	if p.RetryIn != nil {
		delay = *p.RetryIn
	}
	d.State, d.RunAt = StateScheduled, p.Now.Add(delay)
	if delay <= 0 {
		d.State = StateAvailable
	}
	return d
}

// BackoffDelay is min(max, base·2^(n−1)) with ±10 % jitter, for attempt n.
func BackoffDelay(b Backoff, n int) time.Duration {
	if b.Base <= 0 {
		b.Base = DefaultBackoffBase
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d + time.Duration(Jitter()*float64(d))
}

// Jitter is the fraction of a backoff added to it, in [-0.1, 0.1): the
// spread that keeps jobs failing together from retrying together. Redis
// draws it here and passes it to its scripts, whose random numbers repeat
// from call to call.
func Jitter() float64 { return rand.Float64()*0.2 - 0.1 }

// keptPlace is the run_at of a job going back in the queue at once without
// a failure: its own, so that it keeps its place; now when it has none.
func keptPlace(p DecideParams) time.Time {
	if p.RunAt.IsZero() {
		return p.Now
	}
	return p.RunAt
}

// ReapMessage is the error a reaped delivery leaves on the job and its
// attempt.
const ReapMessage = "lease expired: no ack, fail or extend within the timeout"

// RescueMessage is the error a rescue leaves on the job and its attempt:
// which worker fell silent and which node recovered the job.
func RescueMessage(worker, node string) string {
	return "worker " + worker + " stopped heartbeating; job recovered by " + node
}
