package sqlite_test

import (
	"strings"
	"testing"

	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

// The orphan listing walks its indexes in the order it returns rows, so a
// batch costs its own rows: a temporary B-tree in its plan would sort
// every orphan of the workers it reaches, batch after batch.
func TestOrphanListingNeedsNoSort(t *testing.T) {
	t.Parallel()
	s := open(t)
	for _, hp := range sqlite.HotPathsForTest(storetest.Base) {
		if hp.Name != "orphans" {
			continue
		}
		if plan := s.PlanForTest(t.Context(), hp.Query, hp.Args...); strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("the orphan listing sorts:\n%s", plan)
		}
		return
	}
	t.Fatal("no orphans statement among the hot paths")
}
