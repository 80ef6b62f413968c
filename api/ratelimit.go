package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RateLimit is a token bucket: PerSecond requests on average, Burst at
// once. A zero PerSecond means unlimited.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// bucket is one token's allowance. Buckets exist only for configured
// tokens, so their number is fixed: nothing to evict.
type bucket struct {
	mu     sync.Mutex
	level  float64 // requests that may be made now
	last   time.Time
	primed bool
}

// take spends one request at now under limit. When none is left it returns
// false and how long until one is.
func (b *bucket) take(now time.Time, limit RateLimit) (time.Duration, bool) {
	if limit.PerSecond <= 0 {
		return 0, true
	}
	burst := float64(max(limit.Burst, 1))
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.primed {
		b.level, b.last, b.primed = burst, now, true
	}
	// The clock is corrected to the store's and may step back a little:
	// a negative interval refills nothing.
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.level = min(burst, b.level+dt*limit.PerSecond)
	}
	b.last = now
	if b.level >= 1 {
		b.level--
		return 0, true
	}
	return time.Duration((1 - b.level) / limit.PerSecond * float64(time.Second)), false
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
