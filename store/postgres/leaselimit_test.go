package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
)

// A limited lease whose last batch fails (here the update, refused by a
// check) changes nothing: the jobs stay available with attempt 0, the
// rate state and the throttle counts stay as they were; the next lease,
// once the check is gone, takes them.
func TestFlowFailedLeaseChangesNothing(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	capN := 2
	if _, err := s.QueueSetLimits(ctx, &store.QueueSetLimitsParams{Name: "q", Now: now, Limits: &store.Limits{
		Concurrency: &capN, Rate: &store.Rate{Limit: 100, Period: time.Second, Burst: 10}}}); err != nil {
		t.Fatal(err)
	}
	enqueueN(t, s, "q", 3, now)
	if err := s.ExecForTest(ctx, `ALTER TABLE jobs ADD CONSTRAINT refuse_running CHECK (state <> 'running') NOT VALID`); err != nil {
		t.Fatal(err)
	}
	lease := func() ([]*store.Job, error) {
		return s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"q"}, Max: 3, Now: now})
	}
	if got, err := lease(); err == nil {
		t.Fatalf("a lease whose update failed leased %d jobs and no error", len(got))
	}
	var available, tat, throttles int64
	if err := s.QueryRowForTest(ctx, `SELECT
		(SELECT count(*) FROM jobs WHERE state = 'available' AND attempt = 0),
		(SELECT rate_tat FROM queues WHERE name = 'q'),
		(SELECT count(*) FROM queue_throttles)`, &available, &tat, &throttles); err != nil {
		t.Fatal(err)
	}
	if available != 3 || tat != 0 || throttles != 0 {
		t.Errorf("after the failed lease: %d available at attempt 0, rate_tat %d, %d throttle counts; want 3, 0, 0",
			available, tat, throttles)
	}
	if err := s.ExecForTest(ctx, `ALTER TABLE jobs DROP CONSTRAINT refuse_running`); err != nil {
		t.Fatal(err)
	}
	got, err := lease()
	if err != nil || len(got) != capN {
		t.Fatalf("the next lease: %d jobs, %v; want %d", len(got), err, capN)
	}
	if err := s.QueryRowForTest(ctx, `SELECT rate_tat, (SELECT count(*) FROM queue_throttles) FROM queues WHERE name = 'q'`,
		&tat, &throttles); err != nil {
		t.Fatal(err)
	}
	if tat == 0 || throttles != 1 {
		t.Errorf("after the lease: rate_tat %d, %d throttle counts; want it moved and the cap counted once", tat, throttles)
	}
}

// A limited lease reads its candidates, and probes for one left, along
// the jobs_available index in lease order, stopping after a page: no sort
// of the queue's backlog, no scan of its history. (Ordered by a bare id,
// the read sorted by its output column id::text, which no index orders:
// every lease sorted the backlog, all 50,000 jobs in 95 ms when they
// shared a run_at; the probe, an EXISTS, dropped the order and read the
// table in physical order, history first.)
func TestFlowCandidatesReadInIndexOrder(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	// A history of 50,000 finished jobs, and a backlog of 20,000.
	if err := s.ExecForTest(ctx, `INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts,
			timeout_ms, backoff_base_ms, backoff_max_ms, run_at, created_at, started_at, finished_at)
		SELECT gen_random_uuid(), 'q', 'k', 'succeeded', 0, 1, 20, 60000, 1000, 60000,
			now() - interval '1 day', now() - interval '1 day', now() - interval '1 day', now()
		FROM generate_series(1, 50000) i`); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecForTest(ctx, `INSERT INTO jobs (id, queue, kind, state, priority, max_attempts, timeout_ms,
			backoff_base_ms, backoff_max_ms, run_at, created_at, concurrency_key)
		SELECT gen_random_uuid(), 'q', 'k', 'available', i % 3, 20, 60000, 1000, 60000,
			now() + i * interval '1 millisecond', now(), 'key-' || i % 10
		FROM generate_series(1, 20000) i`); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecForTest(ctx, `ANALYZE jobs`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		excluded []string
		after    bool
	}{
		{"first page", nil, false},
		{"a later page, past full keys", []string{"key-1", "key-2"}, true},
	} {
		read, readArgs, probe, probeArgs := postgres.CandidateQueryForTest("q", c.excluded, c.after, 101, time.Now())
		for _, q := range []struct {
			sql  string
			args []any
		}{{read, readArgs}, {probe, probeArgs}} {
			plan, err := s.PlanForTest(ctx, q.sql, q.args...)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if strings.Contains(plan, "Sort") || !strings.Contains(plan, "jobs_available") {
				t.Errorf("%s: the plan does not read jobs_available in lease order:\n%s", c.name, plan)
			}
		}
	}
}
