package postgres_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// The binary decoder of job rows reads every column as pgx's Scan does:
// rows with every column set (a schedule's job with trace, key, tags and
// metadata; one leased, extended and acked with a result; one failed to
// dead), one with every nullable column NULL, and values at the edges of
// their types (negative numbers, a time before 2000, the largest
// bigint, text that is not ASCII).
func TestDecodeJobRowMatchesScan(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := storetest.Base
	key, ckey, sched := "u-1", "tenant-é", "nightly"
	at := now.Add(-time.Hour)
	specs := []store.JobSpec{
		{Kind: "full", Payload: json.RawMessage(`{"a":[1,"ü"]}`), Priority: -7, UniqueKey: &key,
			Tags: []string{"x", `q"uote`, "ünï"}, Metadata: json.RawMessage(`{"m":"v"}`),
			Trace:          &store.Trace{Parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", State: "k=v"},
			ConcurrencyKey: &ckey, Schedule: &sched, ScheduledFor: &at},
		{Kind: "acked"},
		{Kind: "dead", MaxAttempts: 1},
		{Kind: "bare"},
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "wörker", Queues: []string{store.DefaultQueue}, Max: 3, Now: now})
	if err != nil || len(leased) != 3 {
		t.Fatalf("lease: %d jobs, %v", len(leased), err)
	}
	byKind := map[string]*store.Job{}
	for _, j := range leased {
		byKind[j.Kind] = j
	}
	if j := byKind["acked"]; j != nil {
		p := 40
		if _, err := s.JobExtend(ctx, &store.JobExtendParams{ID: j.ID, Token: j.Lease.Token, Progress: &p, Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JobAck(ctx, &store.JobAckParams{ID: j.ID, Token: j.Lease.Token, Result: json.RawMessage(`{"ok":true}`), Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	if j := byKind["dead"]; j != nil {
		if _, err := s.JobFail(ctx, &store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: strings.Repeat("é", 300), Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	// Edges the API does not produce, written directly.
	if err := s.ExecForTest(ctx, `UPDATE jobs SET run_at = '1999-12-31 23:59:59.999999+00', timeout_ms = 9223372036854775807,
		backoff_base_ms = -1, rescues = 2147483647 WHERE kind = 'bare'`); err != nil {
		t.Fatal(err)
	}
	n, fast, diffs, err := s.JobRowsDecodedForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !fast {
		t.Fatal("jobColumns in binary did not take the decoder")
	}
	if n != len(specs) {
		t.Fatalf("%d rows, want %d", n, len(specs))
	}
	for _, d := range diffs {
		t.Error(d)
	}
}
