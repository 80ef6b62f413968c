package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store/postgres"
)

// The hot paths and the scheduler's statements must read the partial
// indexes, never scan jobs: with a history of finished jobs in the table, a
// plan with "Seq Scan on jobs" would make them O(table). The planner
// chooses by statistics, so the table is seeded with the shape of a
// long-running deployment first, in the middle of a bulk rescue (100 silent
// workers holding 100 jobs each). Each statement is planned twice: with its
// arguments, as its first executions are, and generically, as pgx's
// prepared statement runs from its sixth execution on. A generic plan
// guesses ten elements for every list, so a "Join Filter" there is a nested
// loop comparing each row with a whole list: quadratic in the batch. (A
// statement run with PerCallMode is planned for its arguments every time.)
func TestHotPathsUseIndexes(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	seed := []string{
		// 20,000 succeeded jobs in two queues, with their attempts.
		`INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at, started_at, finished_at, worker_id, token, attempt_id)
		SELECT gen_random_uuid(), CASE WHEN i % 2 = 0 THEN 'default' ELSE 'other' END, 'k', 'succeeded', 0, 1,
			20, 60000, 1000, 60000, now() - interval '2 days', now() - interval '2 days',
			now() - interval '2 days', now() - interval '1 day', 'w-' || i % 10, md5(i::text), gen_random_uuid()
		FROM generate_series(1, 20000) i`,
		`INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome)
		SELECT attempt_id, id, 1, worker_id, started_at, finished_at, 'succeeded' FROM jobs`,
		// 500 available, 500 scheduled.
		`INSERT INTO jobs (id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at)
		SELECT gen_random_uuid(), 'default', 'k', CASE WHEN i <= 500 THEN 'available' ELSE 'scheduled' END,
			i % 3, 20, 60000, 1000, 60000, now() + (i - 500) * interval '1 second', now()
		FROM generate_series(1, 1000) i`,
		`INSERT INTO workers (id, started_at, last_heartbeat_at) SELECT 'w-' || i, now(), now()
		FROM generate_series(0, 9) i`,
		// 20,000 idempotency keys, a day's worth, none expired.
		`INSERT INTO idempotency_keys (key, request_hash, job_id, expires_at)
		SELECT 'k-' || i, 'h', gen_random_uuid(), now() + i * interval '4 seconds' FROM generate_series(1, 20000) i`,
		`ANALYZE jobs`, `ANALYZE attempts`, `ANALYZE workers`, `ANALYZE idempotency_keys`,
		// Then what the statistics have not seen yet: 50 jobs running
		// under ten live workers (the statistics saw none, as after a quiet
		// spell), and a burst, as when a rescue follows it within
		// autovacuum's naptime:
		`INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at, started_at, worker_id, token, attempt_id, expires_at)
		SELECT gen_random_uuid(), 'default', 'k', 'running', 0, 1, 20, 60000, 1000, 60000, now(), now(), now(),
			'w-' || i % 10, md5(i::text), gen_random_uuid(), now() + interval '1 minute'
		FROM generate_series(1, 50) i`,
		// 100 workers, silent now, that leased 100 jobs each.
		`INSERT INTO workers (id, started_at, last_heartbeat_at) SELECT 's-' || i, now(), now() - interval '1 minute'
		FROM generate_series(0, 99) i`,
		`INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at, started_at, worker_id, token, attempt_id, expires_at)
		SELECT gen_random_uuid(), 'default', 'k', 'running', 0, 1, 20, 60000, 1000, 60000, now(), now(), now(),
			's-' || i % 100, md5(i::text), gen_random_uuid(), now() + interval '1 minute'
		FROM generate_series(1, 10000) i`,
	}
	for _, q := range seed {
		if err := s.ExecForTest(ctx, q); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}
	for _, hp := range postgres.HotPathsForTest(time.Now()) {
		for _, mode := range []struct {
			name string
			plan func(ctx context.Context, query string, args ...any) (string, error)
		}{{"custom", s.PlanForTest}, {"generic", s.GenericPlanForTest}} {
			if mode.name == "generic" && len(hp.Args) > 0 && hp.Args[0] == postgres.PerCallMode {
				continue // never cached
			}
			plan, err := mode.plan(ctx, hp.SQL, hp.Args...)
			if err != nil {
				t.Errorf("%s (%s plan): explain: %v", hp.Name, mode.name, err)
				continue
			}
			t.Logf("%s (%s plan):\n%s", hp.Name, mode.name, plan)
			for _, table := range []string{"jobs", "attempts"} {
				if strings.Contains(plan, "Seq Scan on "+table) {
					t.Errorf("%s (%s plan) scans %s:\n%s", hp.Name, mode.name, table, plan)
				}
			}
			if strings.Contains(plan, "Join Filter") {
				t.Errorf("%s (%s plan) joins by a filter, row by row:\n%s", hp.Name, mode.name, plan)
			}
			if hp.Index != "" && !strings.Contains(plan, " "+hp.Index+" ") {
				t.Errorf("%s (%s plan) does not read %s:\n%s", hp.Name, mode.name, hp.Index, plan)
			}
			// The listing walks silent workers in order and stops after
			// Limit jobs, instead of sorting every orphan first.
			if hp.Name == "list orphans" && !strings.Contains(plan, "Presorted Key") {
				t.Errorf("list orphans (%s plan) sorts every orphan:\n%s", mode.name, plan)
			}
			if hp.Name == "queue counts" && strings.Contains(plan, " jobs") {
				t.Errorf("queue counts read jobs:\n%s", plan)
			}
		}
	}
}
