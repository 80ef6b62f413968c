package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store/postgres"
)

// The hot paths must read the partial indexes, never scan jobs: with a
// history of finished jobs in the table, a plan with "Seq Scan on jobs"
// would make them O(table). The planner chooses by statistics, so the
// table is seeded with the shape of a long-running deployment first.
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
		// 500 available, 500 scheduled, 50 running of ten workers.
		`INSERT INTO jobs (id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at)
		SELECT gen_random_uuid(), 'default', 'k', CASE WHEN i <= 500 THEN 'available' ELSE 'scheduled' END,
			i % 3, 20, 60000, 1000, 60000, now() + (i - 500) * interval '1 second', now()
		FROM generate_series(1, 1000) i`,
		`INSERT INTO workers (id, started_at, last_heartbeat_at) SELECT 'w-' || i, now(), now()
		FROM generate_series(0, 9) i`,
		`INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at, started_at, worker_id, token, attempt_id, expires_at)
		SELECT gen_random_uuid(), 'default', 'k', 'running', 0, 1, 20, 60000, 1000, 60000, now(), now(), now(),
			'w-' || i % 10, md5(i::text), gen_random_uuid(), now() + interval '1 minute'
		FROM generate_series(1, 50) i`,
		`ANALYZE jobs`, `ANALYZE attempts`, `ANALYZE workers`,
	}
	for _, q := range seed {
		if err := s.ExecForTest(ctx, q); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}
	for _, hp := range postgres.HotPathsForTest(time.Now()) {
		plan, err := s.PlanForTest(ctx, hp.SQL, hp.Args...)
		if err != nil {
			t.Errorf("%s: explain: %v", hp.Name, err)
			continue
		}
		for _, table := range []string{"jobs", "attempts"} {
			if strings.Contains(plan, "Seq Scan on "+table) {
				t.Errorf("%s scans %s:\n%s", hp.Name, table, plan)
			}
		}
		if hp.Name == "queue counts" && strings.Contains(plan, " jobs") {
			t.Errorf("queue counts read jobs:\n%s", plan)
		}
	}
}
