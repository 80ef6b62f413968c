package client

import (
	"errors"
	"fmt"
	"time"
)

// Causes of a handler's ctx ending, as context.Cause reports them. A lost
// lease is ErrLeaseLost: the job was taken from this worker (rescued,
// timed out, released by a deregistration), and the runner will not settle
// it, since the server would refuse it anyway.
var (
	// ErrCancelRequested: an admin asked for the job to be cancelled. The
	// runner still settles it as the handler returns: an ack makes it
	// succeeded, anything else cancelled.
	ErrCancelRequested = errors.New("tether: job cancellation requested")
	// ErrShutdown: the runner was stopped and its grace ran out. A handler
	// that returns an error then has its job released, its attempt not
	// spent; one that returns a result has it acked.
	ErrShutdown = errors.New("tether: runner shutting down")
)

// Permanent marks err as a failure no retry can fix: the job is failed
// with retry false and goes to dead at once (dead_reason
// failed_permanently).
func Permanent(err error) error { return &permanentError{err} }

// RetryIn fails the job with err and asks for the next attempt after d
// rather than after the job's backoff. The attempt is spent: a job at its
// max_attempts goes to dead.
func RetryIn(d time.Duration, err error) error { return &retryInError{d, err} }

// Snooze gives the job back without spending an attempt: it is released,
// available again after d. For "not now" (a resource is busy, a rate
// limit elsewhere), not for failures: a job snoozed forever never dies.
func Snooze(d time.Duration) error { return &snoozeError{d} }

type permanentError struct{ err error }

func (e *permanentError) Error() string { return errText(e.err) }
func (e *permanentError) Unwrap() error { return e.err }

type retryInError struct {
	after time.Duration
	err   error
}

func (e *retryInError) Error() string { return errText(e.err) }
func (e *retryInError) Unwrap() error { return e.err }

type snoozeError struct{ after time.Duration }

func (e *snoozeError) Error() string { return fmt.Sprintf("snoozed for %v", e.after) }

// errText is err's message, never empty: a fail needs an error text.
func errText(err error) string {
	if err == nil || err.Error() == "" {
		return "failed"
	}
	return err.Error()
}

// End is how a job's delivery ended for the runner.
type End string

const (
	EndAcked    End = "acked"    // the handler returned a result; the job succeeded
	EndFailed   End = "failed"   // failed: scheduled for a retry, dead, or cancelled
	EndReleased End = "released" // given back, its attempt not spent (Snooze, shutdown)
	// EndLost: the lease was taken from the worker; the job was not
	// settled by this runner.
	EndLost End = "lost"
	// EndUnsettled: the server refused the settle (a 4xx other than 409 or
	// 404), or never answered before the runner's shutdown ran out. The
	// server's timeout or rescue will end the delivery.
	EndUnsettled End = "unsettled"
)

// Outcome is how one job ended.
type Outcome struct {
	// Job is the job as the settle answered it, or as leased when the
	// runner did not settle it.
	Job *Job
	End End
	// Err is the handler's error, nil when it returned a result.
	Err error
}
