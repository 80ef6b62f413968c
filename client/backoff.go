package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// The Runner's pace after a call that got no useful answer: 100 ms, doubling
// to 10 s, each ±20 % so that workers cut off together do not come back in
// step. A Retry-After longer than that wins, up to the same 10 s.
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 10 * time.Second
)

// backoff paces one loop's retries; the zero value starts at backoffMin.
type backoff struct{ next time.Duration }

// delay returns the wait before the next try after err and doubles the one
// after.
func (b *backoff) delay(err error) time.Duration {
	d := max(b.next, backoffMin)
	b.next = min(2*d, backoffMax)
	d = d*4/5 + rand.N(d*2/5+1)
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > d {
		d = min(e.RetryAfter, backoffMax)
	}
	return d
}

// reset starts the pace again after an answer.
func (b *backoff) reset() { b.next = 0 }

// retryable reports whether a call that failed with err is worth repeating
// as it was: no answer came (a transport error, a timeout, a truncated
// body), or the server answered 429 or 5xx (503 unavailable: its store did
// not answer).
func retryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status == http.StatusTooManyRequests || e.Status >= 500
	}
	return true
}

// refused reports whether err is the server refusing the runner's token:
// no retry can help, so the runner stops.
func refused(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden)
}

// sleep waits d, or less when ctx ends first; it reports whether the full
// wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
