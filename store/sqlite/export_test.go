package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// HotPath is a statement the store runs, with arguments to plan it by and
// the index its plan must read jobs (or workers) by.
type HotPath struct {
	Name  string
	Query string
	Args  []any
	Index string
}

// HotPathsForTest returns the statements whose cost must follow the work
// found, not the table: the lease, and every maintenance statement, the
// very texts the store runs.
func HotPathsForTest(now time.Time) []HotPath {
	at := toMS(now)
	lease, leaseArgs := leaseQuery([]string{"a", "b"}, []string{"k"}, 10)
	orphans, orphanArgs := orphansQuery(&store.JobListOrphansParams{DeadBefore: now, LiveIDs: []string{"node-1"}, Limit: 10})
	return []HotPath{
		{"lease", lease, append([]any{"w", at, at}, leaseArgs...), "jobs_available"},
		{"promote", promoteSQL, []any{at, 10}, "jobs_scheduled"},
		{"reap", expiredSQL, []any{at, 10}, "jobs_running_expiry"},
		{"orphans", orphans, orphanArgs, "jobs_running_worker"},
		{"orphan rows", orphanRowsQuery(2), []any{"a", "b"}, "sqlite_autoindex_jobs_1"},
		{"end deliveries", endedSQL(2), []any{"a", "available", 1, 1, at, nil, nil, nil, "rescue",
			"b", "available", 1, 1, at, nil, nil, nil, "rescue"}, "sqlite_autoindex_jobs_1"},
		{"prune jobs", pruneJobsSQL, []any{at, 10, at, 10}, "jobs_finished"},
		{"prune keys", pruneKeysSQL, []any{at, 10}, "idempotency_keys_expiry"},
		{"prune workers", pruneWorkersSQL, []any{at, 10}, "workers_heartbeat"},
		{"prune nodes", pruneNodesSQL, []any{at, 10}, ""}, // a handful of rows
		{"rescue count", rescueCountSQL, []any{at, 10}, "attempts_rescued"},
		{"prune depth", depthPruneSQL, []any{at / 60_000, 10}, "queue_depth_minute"},
		{"finished in a minute", finishedSQL, []any{at, at + 60_000, 10}, "jobs_finished"},
		{"prune minutes", minutesPruneSQL, []any{at / 60_000, 10}, "queue_minutes_minute"},
		{"list minutes", minutesListSQL, []any{1, 1, "q", at / 60_000, at/60_000 + 60, 1}, ""}, // the primary key: WITHOUT ROWID
		{"list depth", depthListSQL, []any{"q", at / 60_000, at/60_000 + 60, 1}, ""},           // the primary key: WITHOUT ROWID
	}
}

// SetWriteHookForTest has every write transaction tell f how long it held
// the writer. Set it before any write.
func (s *Store) SetWriteHookForTest(f func(held time.Duration)) { s.w.held = f }

// SetCheckpointHookForTest has every checkpoint tell f the WAL's frames
// and how many it copied. Set it before any write.
func (s *Store) SetCheckpointHookForTest(f func(frames, copied int, err error)) { s.ckpt.after = f }

// WriterPragmaForTest reads a pragma on the writer's connection.
func (s *Store) WriterPragmaForTest(ctx context.Context, name string) (string, error) {
	var v string
	err := s.w.conn.QueryRowxContext(ctx, "PRAGMA "+name).Scan(&v)
	return v, err
}

// WriteChunk is the most jobs one maintenance transaction changes.
const WriteChunk = writeChunk

// RescueStep is the orphans one step of a rescue transaction ends.
const RescueStep = rescueStep

// SetRescueHoldForTest replaces rescueShare: hold is how long a rescue
// transaction may go on taking steps, given how long it waited for the
// writer.
func (s *Store) SetRescueHoldForTest(hold func(waited time.Duration) time.Duration) {
	s.rescueHold = hold
}

// RescueShare is rescueShare.
var RescueShare = rescueShare

// RescueGoesOn is rescueGoesOn.
var RescueGoesOn = rescueGoesOn

// PlanForTest returns SQLite's query plan for query, one step a line.
func (s *Store) PlanForTest(ctx context.Context, query string, args ...any) string {
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
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

// LeaseQueryForTest is the lease statement for queues and kinds, with
// arguments for worker w at now.
func LeaseQueryForTest(queues, kinds []string, max int, now time.Time) (string, []any) {
	q, args := leaseQuery(queues, kinds, max)
	return q, append([]any{"w", toMS(now), toMS(now)}, args...)
}

// OneOffStatementsForTest runs n statements of texts no other call uses
// (numbered from first) on the writer, as a long-running store's
// variable-length lists do.
func (s *Store) OneOffStatementsForTest(ctx context.Context, first, n int) error {
	return s.tx(ctx, func(tx *txn) (bool, error) {
		for i := first; i < first+n; i++ {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("SELECT %d", i)); err != nil {
				return false, err
			}
		}
		return false, nil
	})
}

// PreparedForTest is how many statements the writer has prepared.
func (s *Store) PreparedForTest() int {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.w.prepared
}
