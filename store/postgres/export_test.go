package postgres

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// ListenerPIDForTest is the backend pid of the listener connection, 0
// while it is disconnected.
func (s *Store) ListenerPIDForTest() uint32 { return s.lis.backendPID() }

// ExecForTest runs sql on the store's pool, in its schema.
func (s *Store) ExecForTest(ctx context.Context, sql string, args ...any) error {
	_, err := s.pool.Exec(ctx, sql, args...)
	return err
}

// PlanForTest returns Postgres's plan for query, one node a line.
func (s *Store) PlanForTest(ctx context.Context, query string, args ...any) (string, error) {
	return planLines(s.pool.Query(ctx, "EXPLAIN "+query, args...))
}

func planLines(rows pgx.Rows, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		b.WriteString(line + "\n")
	}
	return b.String(), rows.Err()
}

// LeaseQueryForTest is the lease statement for queues, with arguments for
// worker w at now.
func LeaseQueryForTest(queues []string, max int, now time.Time) (string, []any) {
	return leaseQuery(len(queues), false), []any{"w", now, queues, max}
}

// QueryRowForTest scans the one row of sql into dest.
func (s *Store) QueryRowForTest(ctx context.Context, sql string, dest ...any) error {
	return s.pool.QueryRow(ctx, sql).Scan(dest...)
}

// ChannelForTest is the store's NOTIFY channel.
func (s *Store) ChannelForTest() string { return s.channel }

// RefuseListenForTest makes the listener's reconnects fail (or work
// again).
func (s *Store) RefuseListenForTest(refuse bool) { s.lis.refuse.Store(refuse) }

// HotPath is a statement the hot paths or the scheduler run on every call
// or tick, with sample arguments, and the index its plan must read, if one
// is required. Args start with PerCallMode for a statement planned at
// each execution, which has no generic plan to check.
type HotPath struct {
	Name  string
	SQL   string
	Args  []any
	Index string
}

// PerCallMode is how a statement planned at each execution is run.
const PerCallMode = planPerCall

// HotPathsForTest lists the statements whose cost must not grow with the
// number of finished jobs: the hot paths and the scheduler's. Lists hold 1,000 ids, the largest batch the API
// allows, so a plan that hash-joins for a long list shows.
func HotPathsForTest(now time.Time) []HotPath {
	queues := []string{"default", "other"}
	const n = 1000
	ids, strs, nulls, ints, times, bools := make([]string, n), make([]string, n), make([]*string, n), make([]int32, n), make([]time.Time, n), make([]bool, n)
	for i := range ids {
		ids[i], strs[i], times[i] = uuid.Must(uuid.NewV7()).String(), "x", now
	}
	listAll, listAllArgs := listQuery(&store.JobListParams{Queue: "default"}, ids[0], 100)
	listDone, listDoneArgs := listQuery(&store.JobListParams{Queue: "default", State: store.StateSucceeded}, "", 100)
	return []HotPath{
		{"list a queue", listAll, listAllArgs, "jobs_queue_id"},
		{"list a queue's succeeded jobs", listDone, listDoneArgs, "jobs_queue_id"},
		{"newest closed attempt", `SELECT ` + newestClosedSQL, nil, "jobs_succeeded_finished"},
		{"lease", leaseQuery(1, false), []any{"w", now, queues[:1], n}, ""},
		{"lease by kind", leaseQuery(1, true), []any{"w", now, queues[:1], n, []string{"k"}}, ""},
		{"lease from several queues", leaseQuery(2, false), []any{"w", now, queues, n}, ""},
		{"merged lease", leaseManyQuery(1, false), []any{[]string{"w1", "w2"}, times[:2], queues[:1], n, []int32{n / 2, n}}, ""},
		{"merged lease by kind", leaseManyQuery(2, true), []any{[]string{"w1", "w1"}, times[:2], queues, n, []int32{n / 2, n}, []string{"k"}}, ""},
		// An ack of a usual batch, 100: of 1,000, a seq scan of this small
		// table is cheaper than 1,000 probes, and chosen.
		{"ack", ackSQL, []any{times[:100], ids[:100], strs[:100], nulls[:100]}, "jobs_pkey"},
		{"extend", extendSQL, []any{now, nil, nil, ids[0], "x"}, "jobs_pkey"},
		{"end deliveries", endSQL, []any{planPerCall, now, ids, strs, strs, ints, ints, times, nulls, bools, nulls, ints, strs,
			nulls, make([]*time.Time, n), bools, strs, strs}, ""},
		{"promote", promoteSQL, []any{now, n}, "jobs_scheduled"},
		{"reap", lockExpiredSQL, []any{now, n}, "jobs_running_expiry"},
		{"list orphans", orphansSQL, []any{now, []string{"node-1"}, n}, "jobs_running_worker"},
		{"recover", lockOrphansSQL, []any{ids, strs, strs}, ""},
		{"heartbeat", heartbeatSQL, []any{"w", now}, ""},
		{"job history", attemptsSQL, []any{ids[0], store.MaxAttemptsShown}, ""},
		{"prune", pruneJobsSQL, []any{now.Add(-24 * time.Hour), now.Add(-30 * 24 * time.Hour), n}, "jobs_succeeded_finished"},
		{"finished in a minute", finishedSQL, []any{now, now.Add(time.Minute), n}, "jobs_succeeded_finished"},
		{"prune keys", pruneKeysSQL, []any{now, n}, "idempotency_keys_expiry"},
		{"prune workers", pruneWorkersSQL, []any{now.Add(-24 * time.Hour), n}, "jobs_running_worker"},
		{"prune nodes", pruneNodesSQL, []any{now.Add(-24 * time.Hour), n}, ""},
		{"queue counts", countsSQL, nil, ""},
		{"oldest available", oldestSQL, []any{"default"}, ""},
	}
}

// ScanCountsForTest counts jobs by "queue/state" with a full scan, plus
// "queue/retrying" for scheduled jobs with attempt > 0.
func (s *Store) ScanCountsForTest(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT queue || '/' || state, count(*) FROM jobs GROUP BY 1
		UNION ALL
		SELECT queue || '/retrying', count(*) FROM jobs WHERE state = 'scheduled' AND attempt > 0 GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}

// SetAckHookForTest has each merged ack statement call f with the number
// of settles merged, before it runs. Set it before any settle.
func (s *Store) SetAckHookForTest(f func(calls int)) { s.acks.before = f }

// AckWaitingForTest is how many ack-only settles wait for the running one.
func (s *Store) AckWaitingForTest() int { return s.acks.queued() }

// SetLeaseHookForTest has each lease batch call f with the number of
// leases in it, before it runs. Set it before any lease.
func (s *Store) SetLeaseHookForTest(f func(calls int)) { s.leases.before = f }

// LeasesWaitingForTest is how many leases wait behind running ones.
func (s *Store) LeasesWaitingForTest() int {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	n := 0
	for _, g := range s.leases.m {
		n += g.queued()
	}
	return n
}

// SetEnqueueHookForTest has each merged enqueue run call f with the number
// of calls in it, before it runs. Set it before any enqueue.
func (s *Store) SetEnqueueHookForTest(f func(calls int)) { s.enqueues.before = f }

// EnqueuesWaitingForTest is how many enqueues wait behind the running one.
func (s *Store) EnqueuesWaitingForTest() int { return s.enqueues.queued() }

// JobRowsDecodedForTest reads every job row (in id order) through the
// binary decoder (decodeJobRow) and again through pgx's Scan into dest(),
// and describes each row where the two differ; fast reports whether the
// result's fields were ones the decoder takes.
func (s *Store) JobRowsDecodedForTest(ctx context.Context) (n int, fast bool, diffs []string, err error) {
	q := `SELECT ` + jobColumns + ` FROM jobs ORDER BY id`
	rows, err := s.pool.Query(ctx, q)
	if err != nil {
		return 0, false, nil, err
	}
	layout, fast := layoutOf(rows.FieldDescriptions())
	var decoded, scanned []*jobRow
	for rows.Next() {
		r := &jobRow{}
		if !fast {
			rows.Close()
			return 0, false, nil, nil
		}
		if err := r.decodeJobRow(layout, rows.RawValues()); err != nil {
			rows.Close()
			return 0, fast, nil, err
		}
		decoded = append(decoded, r)
	}
	if err := rows.Err(); err != nil {
		return 0, fast, nil, err
	}
	rows, err = s.pool.Query(ctx, q)
	if err != nil {
		return 0, fast, nil, err
	}
	for rows.Next() {
		r := &jobRow{}
		if err := rows.Scan(r.dest()...); err != nil {
			rows.Close()
			return 0, fast, nil, err
		}
		scanned = append(scanned, r)
	}
	if err := rows.Err(); err != nil {
		return 0, fast, nil, err
	}
	if len(decoded) != len(scanned) {
		return 0, fast, nil, fmt.Errorf("%d rows decoded, %d scanned", len(decoded), len(scanned))
	}
	for i := range decoded {
		if !reflect.DeepEqual(decoded[i], scanned[i]) {
			diffs = append(diffs, fmt.Sprintf("decoded %+v\nscanned %+v", *decoded[i], *scanned[i]))
		}
	}
	return len(decoded), fast, diffs, nil
}
