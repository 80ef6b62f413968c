package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// The rate and key limits on a single SQLite server, with the same
// workers (two clients of one process) as the replica test runs.
func TestFlowLimitsOnSQLite(t *testing.T) {
	t.Parallel()
	url := startServer(t, filepath.Join(t.TempDir(), "tether.db"), fastArgs...).url
	cs := []*client.Client{newClient(url), newClient(url)}
	testRateHolds(t, cs)
	testKeysHold(t, cs)
}

// testRateHolds works 15 jobs of a queue limited to 5 starts a second
// with workers on every client: no one-second window (half-open) holds
// more than 5 starts. The starts are the attempts' started_at, the store's
// instants of the leases, which are the instants the rate counts; client
// clocks would add their own skew. Every job ran once, at attempt 1: the
// leases that passed over it while the rate held it back left it as it
// was.
func testRateHolds(t *testing.T, cs []*client.Client) {
	ctx := t.Context()
	const limit, total = 5, 15
	if err := cs[0].SetQueueLimits(ctx, "rated", client.QueueLimits{Rate: &client.QueueRate{Limit: limit, PeriodMS: 1000}}); err != nil {
		t.Fatal(err)
	}
	ids := enqueue(t, cs[0], "rated", total)
	work(t, cs, "rated", total, 0)
	var starts []time.Time
	for _, id := range ids {
		j, err := cs[len(cs)-1].GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Attempt != 1 || len(j.Attempts) != 1 {
			t.Errorf("job %s: attempt %d after %d deliveries, want 1 and 1", id, j.Attempt, len(j.Attempts))
		}
		for _, a := range j.Attempts {
			starts = append(starts, a.StartedAt)
		}
	}
	slices.SortFunc(starts, time.Time.Compare)
	for i, from := range starts {
		n := 0
		for _, s := range starts[i:] {
			if s.Before(from.Add(time.Second)) {
				n++
			}
		}
		if n > limit {
			t.Errorf("%d starts in the second from %s, want at most %d (all: %v)", n, from.Format(time.RFC3339Nano), limit, starts)
			break
		}
	}
}

// testKeysHold works a flood of 20 jobs of one key, enqueued first, and
// one job each of 5 other keys behind them, in a queue with
// key_concurrency 1, with workers on every client holding each job 50 ms:
// no two deliveries of one key overlap; the other keys' jobs ran beside
// the flood and were all done, by the store's instants, before its last
// job started. Each job ran once, at attempt 1: the flood's jobs, passed
// over by lease after lease while their key was busy, kept attempt 0 until
// they ran.
func testKeysHold(t *testing.T, cs []*client.Client) {
	ctx := t.Context()
	one := 1
	if err := cs[0].SetQueueLimits(ctx, "keyed", client.QueueLimits{KeyConcurrency: &one}); err != nil {
		t.Fatal(err)
	}
	var specs []client.JobSpec
	for i := range 20 {
		specs = append(specs, client.JobSpec{Kind: "test", Queue: "keyed", ConcurrencyKey: "flood", Payload: []byte(fmt.Sprintf(`{"i":%d}`, i))})
	}
	for i := range 5 {
		specs = append(specs, client.JobSpec{Kind: "test", Queue: "keyed", ConcurrencyKey: fmt.Sprintf("k%d", i)})
	}
	jobs, err := cs[0].EnqueueBatch(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	got := work(t, cs, "keyed", len(specs), 50*time.Millisecond)

	byKey := map[string][]delivery{}
	for _, d := range got {
		byKey[d.key] = append(byKey[d.key], d)
	}
	for key, ds := range byKey {
		if most := mostAtOnce(ds); most > 1 {
			t.Errorf("%d deliveries of key %s overlapped in time under key_concurrency 1", most, key)
		}
	}
	beside := false
	for _, d := range got {
		if d.key == "flood" {
			continue
		}
		for _, f := range byKey["flood"] {
			beside = beside || (d.from.Before(f.to) && f.from.Before(d.to))
		}
	}
	if !beside {
		t.Error("no other key's job ran beside the flood")
	}

	var lastStart, othersDone time.Time // the flood's last start, the others' last finish
	for _, j := range jobs {
		got, err := cs[len(cs)-1].GetJob(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Attempt != 1 || len(got.Attempts) != 1 || got.Attempts[0].FinishedAt == nil {
			t.Fatalf("job %s: attempt %d after deliveries %+v, want one finished at attempt 1", j.ID, got.Attempt, got.Attempts)
		}
		a := got.Attempts[0]
		if *j.ConcurrencyKey == "flood" && a.StartedAt.After(lastStart) {
			lastStart = a.StartedAt
		} else if *j.ConcurrencyKey != "flood" && a.FinishedAt.After(othersDone) {
			othersDone = *a.FinishedAt
		}
	}
	if !othersDone.Before(lastStart) {
		t.Errorf("the other keys' jobs were done at %s, after the flood's last job started at %s: the flood held them back",
			othersDone.Format(time.RFC3339Nano), lastStart.Format(time.RFC3339Nano))
	}
}
