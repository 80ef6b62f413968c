package store

import "time"

// Limits are a queue's flow control, set by an admin (QueueSetLimits) and
// held across every replica sharing the store. A nil field is no limit.
// Limits gate leasing only: enqueue never fails because of them, and a job
// held back stays available with its attempt unchanged.
//
// Backends keep it as its JSON encoding (the tags below); Postgres's
// trigger reads the keys concurrency and key_concurrency in it.
type Limits struct {
	// Concurrency bounds the queue's running jobs.
	Concurrency *int `json:"concurrency,omitempty"`
	// Rate bounds the queue's lease starts.
	Rate *Rate `json:"rate,omitempty"`
	// KeyConcurrency bounds the running jobs of each concurrency key of
	// the queue; jobs without a key count toward the queue's limits only.
	KeyConcurrency *int `json:"key_concurrency,omitempty"`
	// KeyRate bounds the lease starts of each concurrency key.
	KeyRate *Rate `json:"key_rate,omitempty"`
}

// Rate is at most Limit lease starts per Period, plus Burst: a GCRA over
// lease starts on the store's clock (see Rate.Take). Every lease of a job
// counts, re-leases included.
type Rate struct {
	Limit  int           `json:"limit"`
	Period time.Duration `json:"period"`
	Burst  int           `json:"burst"`
}

// Ranges of limits and of a job's concurrency key, as the API states them.
const (
	MaxConcurrency       = 100_000
	MaxRateLimit         = 1_000_000
	MaxRatePeriod        = 24 * time.Hour
	MaxRateBurst         = 1_000_000
	MaxConcurrencyKeyLen = 255
)

// None reports whether l sets no limit at all.
func (l *Limits) None() bool {
	return l == nil || (l.Concurrency == nil && l.Rate == nil && l.KeyConcurrency == nil && l.KeyRate == nil)
}

// Slots reports whether l counts running jobs (a concurrency limit of the
// queue or of its keys): only then does a delivery's end free something a
// waiting leaser may take.
func (l *Limits) Slots() bool {
	return l != nil && (l.Concurrency != nil || l.KeyConcurrency != nil)
}

// ThrottleReason names the limit that held a lease back, as the metric
// tether_lease_throttled_total labels it.
type ThrottleReason string

// The throttle reasons, one per kind of limit.
const (
	ThrottleConcurrency    ThrottleReason = "concurrency"
	ThrottleKeyConcurrency ThrottleReason = "key_concurrency"
	ThrottleRate           ThrottleReason = "rate"
	ThrottleKeyRate        ThrottleReason = "key_rate"
)

// ThrottleReasons lists every reason, in the order the limits are listed.
var ThrottleReasons = []ThrottleReason{ThrottleConcurrency, ThrottleRate, ThrottleKeyConcurrency, ThrottleKeyRate}

// KeyRateSlack is how long past its theoretical arrival time a key rate's
// state is kept: a state whose tat has passed reads as a full bucket, as
// no state does, so KeyPrune may drop it then; the slack keeps a replica
// whose clock runs ahead from dropping a state another still needs.
const KeyRateSlack = time.Minute

// Micros is an instant as a rate's state keeps it: microseconds since the
// Unix epoch. Microseconds, not milliseconds, because a period need not
// divide into whole milliseconds per start (1000 ms / 3); not nanoseconds,
// because Redis's scripts count in doubles, exact only below 2^53.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros is the instant of a Micros value, in UTC.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// Interval is the GCRA's emission interval in microseconds: the period
// over the limit, rounded up, so that the rounding can only slow the rate,
// never raise it above Limit per Period.
func (r *Rate) Interval() int64 {
	p, n := r.Period.Microseconds(), int64(r.Limit)
	return (p + n - 1) / n
}

// Tolerance is how far ahead of now the GCRA lets the theoretical arrival
// time run: Burst intervals, so Burst + 1 starts may come at once.
func (r *Rate) Tolerance() int64 { return int64(r.Burst) * r.Interval() }

// Take is the GCRA: tat is the rate's theoretical arrival time (0: a rate
// never used, or a full bucket), now the start's instant, both in Micros.
// A start conforms when tat − Tolerance ≤ now; Take then returns the tat
// after it. A start that does not conform changes nothing (ok false).
//
// It keeps the contract: in any window of Period (half-open), at most
// Limit + Burst starts conform. A full bucket lets Burst + 1 through at
// once, and then one per Interval.
func (r *Rate) Take(tat, now int64) (next int64, ok bool) {
	t := max(tat, now)
	if t-r.Tolerance() > now {
		return tat, false
	}
	return t + r.Interval(), true
}

// Ready is the first instant, in Micros, at which a start conforms to a
// rate whose theoretical arrival time is tat: now, or later.
func (r *Rate) Ready(tat, now int64) int64 { return max(now, tat-r.Tolerance()) }

// Allowance is how many starts conform at now, one after the other, given
// tat.
func (r *Rate) Allowance(tat, now int64) int {
	room := now + r.Tolerance() - max(tat, now)
	if room < 0 {
		return 0
	}
	return int(min(room/r.Interval()+1, int64(MaxRateBurst)+1))
}

// Gate admits one queue's lease candidates against its limits, in lease
// order, from what the backend read under its lock: the queue's running
// jobs, counted from job state, and its rates' theoretical arrival times.
// The SQL backends drive one per queue of a lease and Redis's lease script
// mirrors it, so every backend lets the same jobs through.
//
// A Gate without limits admits everything up to Max: a lease naming
// limited and unlimited queues drives one per queue alike.
type Gate struct {
	limits     *Limits
	now        int64
	keyRunning map[string]int
	tat        int64
	tatTaken   bool
	keyTAT     map[string]int64
	keyTaken   map[string]bool
	taken      map[string]int // jobs admitted per key
	budget     int
	bound      []ThrottleReason // the limits that set the budget below Max
	throttled  map[ThrottleReason]bool
	wakeAt     int64 // 0: no rate held a job back
}

// GateParams are what a backend read for one queue before admitting.
type GateParams struct {
	Limits *Limits // nil: none
	// Max is the most the lease takes in all.
	Max int
	// Running counts the queue's running jobs; KeyRunning those of each
	// key that has some (others may be absent).
	Running    int
	KeyRunning map[string]int
	// TAT is the queue rate's theoretical arrival time, in Micros (0:
	// none). Key rates' come by SetKeyTAT.
	TAT int64
	Now time.Time
}

// NewGate starts admitting for one queue: its budget is the least of Max,
// the room under Concurrency and the starts Rate allows now. Lowering a
// limit below what is running stops nothing: the room is then zero.
func NewGate(p GateParams) *Gate {
	g := &Gate{limits: p.Limits, now: Micros(p.Now), keyRunning: p.KeyRunning, tat: p.TAT,
		keyTAT: map[string]int64{}, keyTaken: map[string]bool{}, taken: map[string]int{},
		throttled: map[ThrottleReason]bool{}, budget: max(p.Max, 0)}
	if g.limits == nil {
		g.limits = &Limits{}
	}
	room, allow := g.budget, g.budget
	if c := g.limits.Concurrency; c != nil {
		room = max(*c-p.Running, 0)
	}
	if r := g.limits.Rate; r != nil {
		allow = r.Allowance(p.TAT, g.now)
	}
	least := min(g.budget, room, allow)
	if room == least && room < g.budget {
		g.bound = append(g.bound, ThrottleConcurrency)
	}
	if allow == least && allow < g.budget {
		g.bound = append(g.bound, ThrottleRate)
	}
	g.budget = least
	return g
}

// Budget is how many more of the queue's jobs the lease may start: at 0 it
// reads no more candidates.
func (g *Gate) Budget() int { return g.budget }

// Saturated lists the keys that can start no more jobs now, for a
// candidate query to pass over; nil without a key concurrency limit.
func (g *Gate) Saturated() []string {
	kc := g.limits.KeyConcurrency
	if kc == nil {
		return nil
	}
	var out []string
	for k, n := range g.keyRunning {
		if n+g.taken[k] >= *kc {
			out = append(out, k)
		}
	}
	for k, n := range g.taken {
		if _, counted := g.keyRunning[k]; !counted && n >= *kc {
			out = append(out, k)
		}
	}
	return out
}

// KeyRated reports whether the gate needs each candidate key's rate state
// (SetKeyTAT) before Admit.
func (g *Gate) KeyRated() bool { return g.limits.KeyRate != nil }

// SetKeyTAT hands the gate a key rate's theoretical arrival time as read
// (0: none). A key never set reads as 0.
func (g *Gate) SetKeyTAT(key string, tat int64) { g.keyTAT[key] = tat }

// Admit decides on the queue's next candidate in lease order, of key
// (nil: none), and counts it when it starts. A candidate held back by its
// key is skipped: the ones behind it, of other keys, may still start.
// Call it only while Budget is above 0.
func (g *Gate) Admit(key *string) bool {
	if g.budget <= 0 {
		return false
	}
	if key != nil {
		k := *key
		if kc := g.limits.KeyConcurrency; kc != nil && g.keyRunning[k]+g.taken[k] >= *kc {
			g.throttled[ThrottleKeyConcurrency] = true
			return false
		}
		if kr := g.limits.KeyRate; kr != nil {
			next, ok := kr.Take(g.keyTAT[k], g.now)
			if !ok {
				g.throttled[ThrottleKeyRate] = true
				g.wake(kr.Ready(g.keyTAT[k], g.now))
				return false
			}
			g.keyTAT[k], g.keyTaken[k] = next, true
		}
		g.taken[k]++
	}
	if r := g.limits.Rate; r != nil {
		g.tat, _ = r.Take(g.tat, g.now) // within the budget: it conforms
		g.tatTaken = true
	}
	g.budget--
	return true
}

// Done ends the queue's admission; more reports that available jobs of the
// queue were left behind unread. When the budget ran out on a limit with
// jobs still waiting, that limit throttled the lease.
func (g *Gate) Done(more bool) {
	if !more || g.budget > 0 {
		return
	}
	for _, r := range g.bound {
		g.throttled[r] = true
		if r == ThrottleRate {
			g.wake(g.limits.Rate.Ready(g.tat, g.now))
		}
	}
}

func (g *Gate) wake(at int64) {
	if g.wakeAt == 0 || at < g.wakeAt {
		g.wakeAt = at
	}
}

// Throttled lists the limits that held back a job of the queue, in the
// order of ThrottleReasons.
func (g *Gate) Throttled() []ThrottleReason {
	var out []ThrottleReason
	for _, r := range ThrottleReasons {
		if g.throttled[r] {
			out = append(out, r)
		}
	}
	return out
}

// WakeAt is when a rate that held back a job of the queue lets one start
// again: the moment to wake the queue's waiting leasers, since no other
// transition will. ok is false when no rate held one back.
func (g *Gate) WakeAt() (at time.Time, ok bool) {
	if g.wakeAt == 0 {
		return time.Time{}, false
	}
	return FromMicros(g.wakeAt), true
}

// TAT is the queue rate's theoretical arrival time after the admitted
// starts; changed is false when no start moved it (nothing to write).
func (g *Gate) TAT() (tat int64, changed bool) { return g.tat, g.tatTaken }

// KeyTATs are the key rates' theoretical arrival times the admitted starts
// moved, by key: the rows a backend writes back.
func (g *Gate) KeyTATs() map[string]int64 {
	out := make(map[string]int64, len(g.keyTaken))
	for k := range g.keyTaken {
		out[k] = g.keyTAT[k]
	}
	return out
}
