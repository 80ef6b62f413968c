package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// Sentinel errors. Backends translate their own failures into these once;
// the api package maps each to one HTTP status.
var (
	// ErrNotFound means the job, worker or queue does not exist.
	ErrNotFound = errors.New("not found")
	// ErrLeaseLost means the token is not the job's current lease.
	ErrLeaseLost = errors.New("lease lost")
	// ErrInvalidState means the job's state does not allow the transition.
	ErrInvalidState = errors.New("invalid state")
	// ErrConflict means an idempotency key was reused with another request.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable means the store did not answer: it is down,
	// unreachable, refusing connections for now, or it timed out. The same
	// call may succeed later, so it is worth retrying; if the failure came
	// after the call was sent (a reply lost), the call may have taken
	// effect. Backends mark their drivers' failures with Unavailable.
	ErrUnavailable = errors.New("store unavailable")
)

// RetryUnavailable is how long a client should wait before it retries a
// call that failed with ErrUnavailable (the API's and the dashboard's
// Retry-After): a store restarting or failing over is back within seconds,
// and clients that wait this long between tries add little to its load
// meanwhile.
const RetryUnavailable = 2 * time.Second

// Unavailable returns err marked as ErrUnavailable when it says the store
// did not answer, and err unchanged otherwise. It is each backend's one
// translation of its driver's failures: down reports the driver's own
// signs (error codes, its pool's timeouts); a failed network conversation
// (Unreachable) and a passed deadline always count. The caller's own
// cancellation never does: a request that gave up did not find the store
// down. The mark keeps err's chain and text, for the log.
func Unavailable(ctx context.Context, err error, down func(error) bool) error {
	switch {
	case err == nil || errors.Is(err, ErrUnavailable):
		return err
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return err
	case errors.Is(err, context.DeadlineExceeded) || Unreachable(err) || down(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	default:
		return err
	}
}

// Unreachable reports whether err is a failed conversation with a server
// over the network: a refused, reset or closed connection, an unknown
// host, a network timeout, a reply cut short.
func Unreachable(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
