package postgres

import (
	"context"

	"github.com/tetherq/tether/store"
)

// queryPage reads the jobs of a list query in order until the page's byte
// budget runs out (store.Budget, which may span several calls), so a page of large payloads holds its
// budget in memory, not its limit. It returns the rows read, their jobs,
// and whether the budget ended the page. The rows after that job still
// cross the wire (pgx drains them on Close), so callers with long limits
// read in chunks (listChunk).
func (s *Store) queryPage(ctx context.Context, budget *store.Budget, query string, args ...any) ([]*jobRow, []*store.Job, bool, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	var out []*jobRow
	var jobs []*store.Job
	for rows.Next() {
		r := &jobRow{}
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, nil, false, err
		}
		j := r.job()
		out, jobs = append(out, r), append(jobs, j)
		if budget.Spend(j) {
			rows.Close()
			return out, jobs, true, rows.Err()
		}
	}
	return out, jobs, false, rows.Err()
}

// Chunks of a long list read under a byte budget: the first is small, so
// that a page of large jobs drains few rows past its budget, and each next
// one doubles while the jobs stay small.
const (
	firstListChunk = 16
	maxListChunk   = 256
)
