package sqlite

import (
	"context"
	"strings"
)

// LeaseQueryForTest exposes the lease statement's candidate query.
func LeaseQueryForTest(queues, kinds []string, max int) string {
	query, _ := leaseQuery(queues, kinds, max)
	return strings.ReplaceAll(query, "?", "1")
}

// PlanForTest returns SQLite's query plan for query, one step a line.
func (s *Store) PlanForTest(ctx context.Context, query string) string {
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query)
	if err != nil {
		return "error: " + err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "error: " + err.Error()
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}

// ScanCountsForTest counts jobs by queue and state the slow way, for
// checking the maintained counts.
func (s *Store) ScanCountsForTest(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Queue string `db:"queue"`
		State string `db:"state"`
		N     int64  `db:"n"`
	}
	err := s.r.SelectContext(ctx, &rows, `SELECT queue, state, count(*) AS n FROM jobs GROUP BY queue, state`)
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Queue+"/"+r.State] = r.N
	}
	return out, err
}
