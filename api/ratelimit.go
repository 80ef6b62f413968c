package api

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a token bucket: PerSecond requests on average, Burst at
// once. A zero PerSecond means unlimited.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// bucket is one token's allowance, made for its role's limit when the
// tokens are loaded; nil for an unlimited role. Buckets exist only for
// configured tokens, so their number is fixed: nothing to evict.
type bucket struct {
	lim *rate.Limiter
}

func newBucket(limit RateLimit) *bucket {
	if limit.PerSecond <= 0 {
		return nil
	}
	return &bucket{lim: rate.NewLimiter(rate.Limit(limit.PerSecond), max(limit.Burst, 1))}
}

// take spends one request at now. When none is left it spends nothing and
// returns false and how long until one is. The clock is corrected to the
// store's and may step back a little: rate counts no refill for that.
func (b *bucket) take(now time.Time) (time.Duration, bool) {
	if b == nil {
		return 0, true
	}
	r := b.lim.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return wait, false
	}
	return 0, true
}

// retryAfter is a wait in whole seconds, at least 1, for Retry-After.
func retryAfter(wait time.Duration) string {
	return strconv.FormatInt(int64(max(1, math.Ceil(wait.Seconds()))), 10)
}

// tooMany answers 429 rate_limited with Retry-After.
func tooMany(w http.ResponseWriter, wait time.Duration, detail string) {
	w.Header().Set("Retry-After", retryAfter(wait))
	writeProblem(w, newProblem(codeRateLimited, detail))
}
