package api

import (
	"container/list"
	"net/netip"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of NewAuthThrottle in cmd/server: an address may fail 10 times
// at once, then once every 6 s (10 a minute). Far more than a person
// mistyping or a client with a stale token needs, and far too few for
// online guessing.
const (
	DefaultAuthFailures      = 10
	DefaultAuthFailureWindow = time.Minute
)

// maxThrottleClients bounds the addresses an AuthThrottle remembers; past
// it the one least recently seen is forgotten. An entry is a few hundred
// bytes, so this is at most some tens of MB.
const maxThrottleClients = 1 << 16

// AuthThrottle limits failed authentication per client address (an IPv4
// address, an IPv6 /64), across the API's bearer tokens and the
// dashboard's login when both are given the same one. It is safe for
// concurrent use.
//
// Only a token that is presented and wrong counts as a failure; a request
// with no token at all guesses nothing. While an address is over its
// failures, its requests are refused (429) before any token is checked,
// so it learns nothing about the tokens it tries: a wrong one is not
// counted, and a right one it never used before is refused too. Tokens
// that did authenticate from the address before keep working, so clients
// behind the same proxy or NAT as a guesser are not locked out once they
// run. (Letting every right token through would give a guesser a 200
// among 429s: no throttle at all.)
type AuthThrottle struct {
	failures int
	every    rate.Limit
	max      int // addresses remembered
	mu       sync.Mutex
	clients  map[netip.Prefix]*list.Element
	recent   list.List // of *throttled, most recently seen first
}

// throttled is what an AuthThrottle remembers of one address.
type throttled struct {
	key   netip.Prefix
	fails *rate.Limiter // nil until its first failure
	known []string      // ids of the tokens that authenticated from it
}

// NewAuthThrottle allows an address failures failed authentications at
// once, then failures per window. failures <= 0 disables it.
func NewAuthThrottle(failures int, window time.Duration) *AuthThrottle {
	t := &AuthThrottle{failures: failures, max: maxThrottleClients, clients: map[netip.Prefix]*list.Element{}}
	if failures > 0 && window > 0 {
		t.every = rate.Every(window / time.Duration(failures))
	}
	return t
}

// Try records that the client at remoteAddr (a request's RemoteAddr)
// presented a token at now, and reports whether the request may be
// answered on its merits; if not, it is to be refused with 429 and a
// Retry-After of wait. id names the token when it is a valid one (the
// SHA-256 digest of the token, as a string), "" when it is not.
func (t *AuthThrottle) Try(remoteAddr, id string, now time.Time) (wait time.Duration, ok bool) {
	if t == nil || t.every <= 0 {
		return 0, true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.client(clientOfRemote(remoteAddr))
	if id != "" && slices.Contains(c.known, id) {
		return 0, true
	}
	if c.fails != nil {
		if tokens := c.fails.TokensAt(now); tokens < 1 {
			return time.Duration((1 - tokens) / float64(t.every) * float64(time.Second)), false
		}
	}
	if id != "" {
		c.known = append(c.known, id)
		return 0, true
	}
	if c.fails == nil {
		c.fails = rate.NewLimiter(t.every, t.failures)
	}
	c.fails.AllowN(now, 1)
	return 0, true
}

// client returns the entry of key, made if need be, as the most recently
// seen; it forgets the least recently seen beyond t.max.
func (t *AuthThrottle) client(key netip.Prefix) *throttled {
	if e, ok := t.clients[key]; ok {
		t.recent.MoveToFront(e)
		return e.Value.(*throttled)
	}
	c := &throttled{key: key}
	t.clients[key] = t.recent.PushFront(c)
	if t.recent.Len() > t.max {
		oldest := t.recent.Back()
		t.recent.Remove(oldest)
		delete(t.clients, oldest.Value.(*throttled).key)
	}
	return c
}

// clientOfRemote is clientOf the address of a request's RemoteAddr; every
// unparsable one shares the zero key.
func clientOfRemote(remoteAddr string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Prefix{}
	}
	return clientOf(ap.Addr())
}
