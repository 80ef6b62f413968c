// Package webhook verifies signed deliveries from webhook senders: Standard
// Webhooks, GitHub and Stripe. The verifiers are pure functions over the raw
// request bytes, so they run before anything parses the body, and every MAC
// comparison takes constant time.
//
// A signature header may carry several entries (a sender rotating its secret
// signs with both), and a hook may hold several secrets (Tether's side of
// the same rotation): a delivery verifies when any entry matches any secret.
// An entry that fails to decode is simply one that does not match.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"time"
)

// ErrBadSignature is every verification failure: a missing or malformed
// header, a timestamp outside the window, or no matching signature. The
// reason is deliberately not told apart, so a caller cannot probe which
// part of a forged delivery was wrong.
var ErrBadSignature = errors.New("webhook: bad signature")

// DefaultTolerance is how far a signed timestamp may be from the server's
// clock, either way: the window the senders' own libraries use.
const DefaultTolerance = 5 * time.Minute

// DefaultDedupe is how long a delivery id is remembered: 72 hours, the
// horizon over which senders retry a delivery (Stripe up to three days).
const DefaultDedupe = 72 * time.Hour

// maxUnix bounds the signed timestamps worth comparing (year 36812).
const maxUnix = 1 << 40

// mac is HMAC-SHA256 of the parts, concatenated, under key.
func mac(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// inWindow reports whether the signed unix time ts is within tolerance of
// now, in the past or the future.
func inWindow(ts int64, now time.Time, tolerance time.Duration) bool {
	// Compare in seconds, and only for plausible times, so that no
	// timestamp a sender can write overflows the arithmetic.
	if ts < 0 || ts > maxUnix {
		return false
	}
	skew := now.Unix() - ts
	limit := int64(tolerance / time.Second)
	return skew <= limit && skew >= -limit
}
