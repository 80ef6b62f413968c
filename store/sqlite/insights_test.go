package sqlite_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

func TestInsightsContract(t *testing.T) {
	storetest.RunInsights(t, func(t *testing.T) storetest.InsightsStore { return open(t) })
}

// A filter no index serves examines a bounded window per call: a rare kind
// behind more jobs than the window comes back on a later page, after pages
// that hold nothing but a cursor.
func TestSearchWindow(t *testing.T) {
	t.Parallel()
	s := open(t)
	now := storetest.Base
	rare, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "rare"}}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		specs := make([]store.JobSpec, 1000)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "common"}
		}
		now = now.Add(time.Millisecond)
		if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	var pages int
	var found []string
	for cursor := ""; ; pages++ {
		page, err := s.JobSearch(t.Context(), &store.JobSearchParams{Kind: "rare", Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Jobs {
			found = append(found, j.ID)
		}
		if cursor = page.NextCursor; cursor == "" || pages > 10 {
			break
		}
	}
	if len(found) != 1 || found[0] != rare.Jobs[0].ID || pages < 1 {
		t.Errorf("found %q after %d empty pages, want the rare job after at least one", found, pages)
	}
}

// The dashboard's lists read their indexes, never scan jobs.
func TestInsightsUseIndexes(t *testing.T) {
	t.Parallel()
	s := open(t)
	for name, query := range map[string]string{
		"retrying count": `SELECT queue, count(*) FROM jobs INDEXED BY jobs_retrying_queue
			WHERE state = 'scheduled' AND attempt > 0 GROUP BY queue`,
		"dead": `SELECT id FROM jobs INDEXED BY jobs_dead WHERE state = 'dead' AND (finished_at, id) < (1, 'x')
			ORDER BY finished_at DESC, id DESC LIMIT 50`,
		"rescues": `SELECT a.job_id, j.kind FROM attempts a INDEXED BY attempts_rescued LEFT JOIN jobs j ON j.id = a.job_id
			WHERE a.outcome = 'orphaned' AND a.finished_at >= 0 ORDER BY a.finished_at DESC, a.seq DESC LIMIT 50`,
	} {
		// Scanning a partial index reads only the rows in its state.
		plan := s.PlanForTest(t.Context(), query)
		for _, line := range strings.Split(plan, "\n") {
			if line == "SCAN jobs" || line == "SCAN a" || strings.Contains(line, "TEMP B-TREE FOR ORDER") {
				t.Errorf("%s scans the table or sorts:\n%s", name, plan)
			}
		}
	}
}
