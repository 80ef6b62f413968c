package store

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var limitNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestRateWindow drives the GCRA with starts asked for at random instants
// and checks the contract: no half-open window of Period holds more than
// Limit + Burst starts. It also checks that the rate is not starved: a
// steady demand gets Limit starts per Period in the long run.
func TestRateWindow(t *testing.T) {
	rates := []Rate{
		{Limit: 5, Period: time.Second},
		{Limit: 5, Period: time.Second, Burst: 3},
		{Limit: 3, Period: time.Second}, // 333.3 ms: not whole milliseconds
		{Limit: 1, Period: time.Minute, Burst: 10},
		{Limit: 7, Period: 10 * time.Millisecond, Burst: 1},
		{Limit: 1000, Period: time.Second},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range rates {
		var starts []int64
		tat, now := int64(0), Micros(limitNow)
		end := now + 20*r.Period.Microseconds()
		for now < end {
			if next, ok := r.Take(tat, now); ok {
				tat = next
				starts = append(starts, now)
				continue // ask again at once: a burst takes all it may
			}
			// Ask again a little later, or just when the next start
			// conforms: the edge is where an off-by-one would show.
			if rng.IntN(2) == 0 {
				now = r.Ready(tat, now)
			} else {
				now += rng.Int64N(r.Interval()/2 + 1)
			}
		}
		period := r.Period.Microseconds()
		for i := range starts {
			// starts[i:j] lie in [starts[i], starts[i] + period)
			j, _ := slices.BinarySearch(starts, starts[i]+period)
			if n := j - i; n > r.Limit+r.Burst {
				t.Errorf("%+v: %d starts in the window from %d µs, want at most %d", r, n, starts[i], r.Limit+r.Burst)
				break
			}
		}
		// Demand at every instant the rate allows: Limit per Period.
		n, tat, now := 0, int64(0), Micros(limitNow)
		for now < end {
			tat, _ = r.Take(tat, now)
			n++
			now = r.Ready(tat, now)
		}
		if want := 20*r.Limit - 1; n < want {
			t.Errorf("%+v: %d starts in 20 periods of steady demand, want at least %d", r, n, want)
		}
	}
}

// TestRateAllowance: Allowance is the number of Takes that conform one
// after the other at the same instant, and Ready the instant the next
// one does.
func TestRateAllowance(t *testing.T) {
	now := Micros(limitNow)
	for _, c := range []struct {
		r   Rate
		tat int64
	}{
		{Rate{Limit: 5, Period: time.Second}, 0},
		{Rate{Limit: 5, Period: time.Second, Burst: 4}, 0},
		{Rate{Limit: 5, Period: time.Second, Burst: 4}, now + 500_000},
		{Rate{Limit: 5, Period: time.Second}, now + 200_000},
		{Rate{Limit: 3, Period: time.Second, Burst: 2}, now - time.Hour.Microseconds()},
	} {
		n, tat := 0, c.tat
		for {
			next, ok := c.r.Take(tat, now)
			if !ok {
				break
			}
			n, tat = n+1, next
		}
		if got := c.r.Allowance(c.tat, now); got != n {
			t.Errorf("%+v at tat %d: Allowance = %d, Take conformed %d times", c.r, c.tat-now, got, n)
		}
		ready := c.r.Ready(tat, now)
		if _, ok := c.r.Take(tat, ready); !ok || ready <= now {
			t.Errorf("%+v: Ready = now%+d µs, but a start then does not conform", c.r, ready-now)
		}
		if _, ok := c.r.Take(tat, ready-1); ok {
			t.Errorf("%+v: a start conforms before Ready", c.r)
		}
	}
}

func TestGateBudget(t *testing.T) {
	three := 3
	rate := &Rate{Limit: 2, Period: time.Second}
	tests := []struct {
		name    string
		limits  *Limits
		max     int
		running int
		tat     int64
		budget  int
		// throttled when the budget runs out with jobs left
		throttled []ThrottleReason
	}{
		{"no limits", nil, 10, 50, 0, 10, nil},
		{"room", &Limits{Concurrency: &three}, 10, 1, 0, 2, []ThrottleReason{ThrottleConcurrency}},
		{"max below room", &Limits{Concurrency: &three}, 1, 0, 0, 1, nil},
		{"full", &Limits{Concurrency: &three}, 10, 3, 0, 0, []ThrottleReason{ThrottleConcurrency}},
		// Lowering a limit below what runs stops nothing: no room, no error.
		{"over", &Limits{Concurrency: &three}, 10, 7, 0, 0, []ThrottleReason{ThrottleConcurrency}},
		{"rate", &Limits{Rate: rate}, 10, 0, 0, 1, []ThrottleReason{ThrottleRate}},
		{"rate spent", &Limits{Rate: rate}, 10, 0, Micros(limitNow) + 400_000, 0, []ThrottleReason{ThrottleRate}},
		{"both bind", &Limits{Concurrency: &three, Rate: rate}, 10, 2, 0, 1,
			[]ThrottleReason{ThrottleConcurrency, ThrottleRate}},
	}
	for _, tc := range tests {
		g := NewGate(GateParams{Limits: tc.limits, Max: tc.max, Running: tc.running, TAT: tc.tat, Now: limitNow})
		if g.Budget() != tc.budget {
			t.Errorf("%s: Budget = %d, want %d", tc.name, g.Budget(), tc.budget)
		}
		for g.Budget() > 0 {
			if !g.Admit(nil) {
				t.Fatalf("%s: a job without a key refused within the budget", tc.name)
			}
		}
		g.Done(true)
		if got := g.Throttled(); !slices.Equal(got, tc.throttled) {
			t.Errorf("%s: Throttled = %v, want %v", tc.name, got, tc.throttled)
		}
		_, wakes := g.WakeAt()
		if want := slices.Contains(tc.throttled, ThrottleRate); wakes != want {
			t.Errorf("%s: WakeAt set = %v, want %v (a rate that held a job back sets it)", tc.name, wakes, want)
		}
	}
}

// TestGateNothingLeft: a budget spent with no job left behind throttled
// nothing.
func TestGateNothingLeft(t *testing.T) {
	one := 1
	g := NewGate(GateParams{Limits: &Limits{Concurrency: &one}, Max: 5, Now: limitNow})
	g.Admit(nil)
	g.Done(false)
	if got := g.Throttled(); len(got) != 0 {
		t.Errorf("Throttled = %v with nothing left behind", got)
	}
}

// TestGateKeys: a key at its limit is skipped, not the end of the lease:
// the candidates of other keys, and those without a key, behind it start.
func TestGateKeys(t *testing.T) {
	one := 1
	a, b := "a", "b"
	g := NewGate(GateParams{
		Limits: &Limits{KeyConcurrency: &one}, Max: 10, Running: 1, KeyRunning: map[string]int{"a": 1}, Now: limitNow,
	})
	if got := g.Saturated(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("Saturated = %v, want [a]", got)
	}
	var admitted []string
	for _, k := range []*string{&a, &b, &b, nil, &a, nil} {
		if g.Admit(k) {
			name := "-"
			if k != nil {
				name = *k
			}
			admitted = append(admitted, name)
		}
	}
	if want := []string{"b", "-", "-"}; !slices.Equal(admitted, want) {
		t.Errorf("admitted %v, want %v", admitted, want)
	}
	got := g.Saturated()
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Saturated after the lease = %v, want [a b]", got)
	}
	g.Done(false)
	if got := g.Throttled(); !slices.Equal(got, []ThrottleReason{ThrottleKeyConcurrency}) {
		t.Errorf("Throttled = %v, want [key_concurrency]", got)
	}
	if g.Budget() != 7 {
		t.Errorf("Budget = %d after 3 starts of 10, want 7", g.Budget())
	}
}

// TestGateKeyRate: each key has a bucket of its own; the one held back
// sets WakeAt to when its bucket lets one through, and only the buckets
// that moved are written back.
func TestGateKeyRate(t *testing.T) {
	a, b := "a", "b"
	kr := &Rate{Limit: 1, Period: time.Second}
	g := NewGate(GateParams{Limits: &Limits{KeyRate: kr}, Max: 10, Now: limitNow})
	if !g.KeyRated() {
		t.Fatal("KeyRated = false with a key rate")
	}
	now := Micros(limitNow)
	g.SetKeyTAT("b", now+300_000) // b started 700 ms ago
	if !g.Admit(&a) || g.Admit(&a) || g.Admit(&b) {
		t.Fatal("want a once, then neither a again nor b")
	}
	at, ok := g.WakeAt()
	if !ok || !at.Equal(limitNow.Add(300*time.Millisecond)) {
		t.Errorf("WakeAt = %v %v, want b's bucket in 300ms", at, ok)
	}
	tats := g.KeyTATs()
	if len(tats) != 1 || tats["a"] != now+1_000_000 {
		t.Errorf("KeyTATs = %v, want a's only, a second ahead", tats)
	}
	if got := g.Throttled(); !slices.Equal(got, []ThrottleReason{ThrottleKeyRate}) {
		t.Errorf("Throttled = %v, want [key_rate]", got)
	}
	if _, changed := g.TAT(); changed {
		t.Error("TAT changed without a queue rate")
	}
}
