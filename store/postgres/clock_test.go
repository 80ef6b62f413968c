package postgres_test

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// A replica whose local clock runs an hour fast must not rescue a live
// worker's job early. The store never reads a clock in a mutating
// statement: Now in the params is the instant, and servers take it from
// the database's clock (Store.Now), corrected by an offset they measure.
func TestSkewedLocalClock(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	ctx := t.Context()
	dbNow, err := a.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Both replicas read one clock: the database's.
	if bNow, err := b.Now(ctx); err != nil || bNow.Sub(dbNow) < 0 || bNow.Sub(dbNow) > 10*time.Second {
		t.Fatalf("replica B's Now = %s, %v; want the database clock just after %s", bNow, err, dbNow)
	}

	// A worker leases through A at the database's time, with a 90 s timeout.
	now := store.Trunc(dbNow)
	enqueueN(t, a, store.DefaultQueue, 1, now)
	leased, err := a.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{store.DefaultQueue}, Max: 1, Now: now})
	if err != nil || len(leased) != 1 {
		t.Fatalf("lease: %d jobs, %v", len(leased), err)
	}
	if want := now.Add(store.DefaultTimeout); !leased[0].Lease.ExpiresAt.Equal(want) {
		t.Errorf("expires_at = %s, want now + timeout = %s (the params' Now, not a clock)", leased[0].Lease.ExpiresAt, want)
	}

	// Replica B's local clock runs an hour fast. It measures its offset to
	// the store's clock, as cmd/server does, and corrects by it.
	skewed := func() time.Time { return time.Now().Add(time.Hour) }
	storeNow, err := b.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	offset := storeNow.Sub(skewed())
	corrected := skewed().Add(offset)
	orphans, err := b.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: corrected.Add(-store.DefaultDeadAfter), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(orphans) != 0 {
		t.Errorf("replica B with a corrected clock sees orphans a moment after the lease: %+v", orphans)
	}
	// Uncorrected, the same replica would rescue the job of a live worker:
	// the skew is what the correction removes.
	early, err := b.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: skewed().Add(-store.DefaultDeadAfter), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(early) != 1 {
		t.Errorf("with the raw skewed clock, orphans = %d; the test no longer shows the hazard", len(early))
	}
	// Nothing the store did consulted a clock of its own: the job is still
	// running under its lease, untouched by B's reads.
	j, err := b.JobGet(ctx, &store.JobGetParams{ID: leased[0].ID, Now: corrected})
	if err != nil || j.State != store.StateRunning || j.Lease.Token != leased[0].Lease.Token {
		t.Errorf("job after the skewed replica's scans: %+v, %v", j, err)
	}
}
