package postgres_test

import (
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
// that hold nothing but a cursor, whether the primary key or a queue's
// index drives the search.
func TestSearchWindow(t *testing.T) {
	t.Parallel()
	s := open(t)
	now := storetest.Base
	rare, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{
		Jobs: []store.JobSpec{{Kind: "rare", Queue: "q"}}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		specs := make([]store.JobSpec, 1000)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "common", Queue: "q"}
		}
		now = now.Add(time.Millisecond)
		if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	for _, queue := range []string{"", "q"} {
		var pages int
		var found []string
		for cursor := ""; ; pages++ {
			page, err := s.JobSearch(t.Context(), &store.JobSearchParams{Kind: "rare", Queue: queue, Cursor: cursor})
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
			t.Errorf("queue %q: found %q after %d empty pages, want the rare job after at least one", queue, found, pages)
		}
	}
}
