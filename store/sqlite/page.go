package sqlite

import (
	"context"

	"github.com/tetherq/tether/store"
)

// selectPage reads the jobs of a list query in order until the page's byte
// budget runs out (store.Budget): rows past that job are never read, so a
// page of large payloads costs its budget, not its limit. It returns the
// rows read and their jobs, and whether the budget ended the page.
func (s *Store) selectPage(ctx context.Context, maxBytes int, query string, args ...any) ([]jobRow, []*store.Job, bool, error) {
	rows, err := s.r.QueryxContext(ctx, query, args...)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	var out []jobRow
	var jobs []*store.Job
	budget := store.NewBudget(maxBytes)
	for rows.Next() {
		var row jobRow
		if err := rows.StructScan(&row); err != nil {
			return nil, nil, false, err
		}
		j := row.job()
		out, jobs = append(out, row), append(jobs, j)
		if budget.Spend(j) {
			return out, jobs, true, rows.Close()
		}
	}
	return out, jobs, false, rows.Err()
}
