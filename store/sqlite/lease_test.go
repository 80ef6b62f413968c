package sqlite_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

// A lease naming several queues merges their slices of jobs_available in
// lease order and stops at max: no temporary b-tree sorting max jobs per
// queue, whatever the kinds.
func TestLeaseMergesQueues(t *testing.T) {
	t.Parallel()
	s := open(t)
	queues := make([]string, 10)
	for i := range queues {
		queues[i] = fmt.Sprintf("q%d", i)
	}
	for _, kinds := range [][]string{nil, {"a", "b"}} {
		query, args := sqlite.LeaseQueryForTest(queues, kinds, 100, storetest.Base)
		plan := s.PlanForTest(t.Context(), query, args...)
		if !strings.Contains(plan, "MERGE (UNION ALL)") || strings.Contains(plan, "TEMP B-TREE") ||
			strings.Count(plan, "INDEX jobs_available (queue=?)") != len(queues) {
			t.Errorf("lease of %d queues, kinds %q:\n%s", len(queues), kinds, plan)
		}
	}
}

func TestLeaseAcrossQueues(t *testing.T) {
	t.Parallel()
	storetest.LeaseOrderAcrossQueues(t, open(t))
}
