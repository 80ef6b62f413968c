package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// KeyPruneDropsPassedKeyRates checks that KeyPrune deletes the key rate
// states whose bucket is full again, past the slack, and only those. The
// stores that keep key rates in rows (SQLite, Postgres) run it; Redis's
// expire by themselves.
func KeyPruneDropsPassedKeyRates(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := time.Now()
	if _, err := s.QueueSetLimits(ctx, &store.QueueSetLimitsParams{Name: "q",
		Limits: &store.Limits{KeyRate: &store.Rate{Limit: 1, Period: time.Minute}}, Now: now}); err != nil {
		t.Fatal(err)
	}
	a, b := "a", "b"
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{
		{Kind: "k", Queue: "q", ConcurrencyKey: &a}, {Kind: "k", Queue: "q", ConcurrencyKey: &b}}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"q"}, Max: 10, Now: now}); err != nil || len(got) != 2 {
		t.Fatalf("leased %d, %v; want 2", len(got), err)
	}
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{time.Minute + store.KeyRateSlack - time.Second, 0}, {time.Minute + store.KeyRateSlack + time.Second, 2}} {
		n, err := s.KeyPrune(ctx, &store.KeyPruneParams{Now: now.Add(c.at)})
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("KeyPrune at +%v deleted %d, want %d", c.at, n, c.want)
		}
	}
}
