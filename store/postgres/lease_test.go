package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store/postgres"
)

// A lease naming 10 busy queues among 1,000 small ones reads each named
// queue's jobs_available in order, stopping at max, in the plan for its
// arguments and in the generic one Postgres caches after a few calls.
// Statistics put the average queue below max here: a queue known only as
// a join parameter (a LATERAL scan over unnest of the names) was planned
// at that average, through jobs_queue_id and a sort of all its jobs.
func TestLeaseOfManyQueuesReadsItsIndex(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	for _, q := range []string{
		`INSERT INTO jobs (id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at)
		SELECT gen_random_uuid(), 'small-' || i, 'k', 'available', 0, 20, 60000, 1000, 60000, now(), now()
		FROM generate_series(1, 990) i`,
		`INSERT INTO jobs (id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, created_at)
		SELECT gen_random_uuid(), 'busy-' || i % 10, 'k', 'available', 0, 20, 60000, 1000, 60000, now(), now()
		FROM generate_series(1, 20000) i`,
		`ANALYZE jobs`,
	} {
		if err := s.ExecForTest(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	queues := make([]string, 10)
	for i := range queues {
		queues[i] = fmt.Sprintf("busy-%d", i)
	}
	query, args := postgres.LeaseQueryForTest(queues, 100, time.Now())
	for name, explain := range map[string]func() (string, error){
		"custom":  func() (string, error) { return s.PlanForTest(ctx, query, args...) },
		"generic": func() (string, error) { return s.GenericPlanForTest(ctx, query, args...) },
	} {
		plan, err := explain()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(plan, "Index Scan using jobs_available on jobs") != len(queues) ||
			strings.Contains(plan, "jobs_queue_id") || strings.Contains(plan, "Bitmap Index Scan on jobs_available") {
			t.Errorf("%s plan of a lease of %d queues:\n%s", name, len(queues), plan)
		}
	}
}
