package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// orphansSQL lists the running jobs of workers silent since $1, owners in
// $2 aside, at most $3: oldest silence first, each worker's jobs by id.
const orphansSQL = `SELECT j.id::text, w.id, j.token, w.last_heartbeat_at
	FROM (SELECT id, last_heartbeat_at FROM workers WHERE last_heartbeat_at <= $1 AND id <> ALL($2::text[])
		ORDER BY last_heartbeat_at, id OFFSET 0) w
	CROSS JOIN LATERAL (
		SELECT id, token FROM jobs WHERE worker_id = w.id AND state = 'running' ORDER BY id LIMIT $3) j
	ORDER BY w.last_heartbeat_at, w.id, j.id LIMIT $3`

// JobListOrphans finds the running jobs of silent workers. It starts from
// workers (a small table, scanned), sorted by silence in a subquery that
// OFFSET 0 keeps apart, and reaches each silent one's jobs in id order
// through jobs_running_worker (a lateral subquery, which the planner cannot
// turn into a join over every running job); the outer sort then only
// orders each worker's few jobs (an incremental sort) and the listing stops
// after Limit jobs: O(workers + Limit), however many jobs are running or
// orphaned. A job whose owner never registered cannot exist here: a lease
// registers its worker in the same statement, and a deregister releases
// the worker's jobs in the same transaction.
func (s *Store) JobListOrphans(ctx context.Context, p *store.JobListOrphansParams) ([]store.Orphan, error) {
	live := p.LiveIDs
	if live == nil {
		live = []string{}
	}
	rows, err := s.pool.Query(ctx, orphansSQL, store.Trunc(p.DeadBefore), live, store.LimitOr(p.Limit, store.MaxBatch))
	if err != nil {
		return nil, fmt.Errorf("list orphans: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Orphan, error) {
		var o store.Orphan
		err := r.Scan(&o.JobID, &o.WorkerID, &o.Token, &o.LastHeartbeatAt)
		o.LastHeartbeatAt = o.LastHeartbeatAt.UTC()
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("list orphans: %w", err)
	}
	return out, nil
}

// lockOrphansSQL locks the orphans ($1 ids, $2 owners, $3 tokens) that
// are still the same delivery, skipping rows another transaction holds.
// The list drives one index lookup per orphan, a lateral subquery that the
// planner cannot flatten (it locks), so whatever plan Postgres caches for
// the statement a batch costs O(batch). (Its generic plan guesses a list of
// ten; "id = ANY … AND (…) IN (unnest …)", as this was, became a nested
// loop comparing every row with the whole list: 0.5 s for 1,000 orphans.)
// SKIP LOCKED never waits, so the order the rows are locked in cannot
// deadlock.
const lockOrphansSQL = `SELECT j.* FROM unnest($1::uuid[], $2::text[], $3::text[]) AS o(o_id, o_owner, o_token)
	CROSS JOIN LATERAL (SELECT ` + jobColumns + ` FROM jobs
		WHERE id = o_id AND worker_id = o_owner AND token = o_token AND state = 'running'
		FOR UPDATE SKIP LOCKED) j`

// JobRecover rescues orphans. It locks the rows that still match (id,
// owner, token, running) with SKIP LOCKED and ends them in one guarded
// statement. A row another recoverer holds is skipped: that one rescues it,
// or finds it moved on, and either way this call has nothing to win. So
// replicas racing over the same listing never wait for each other, and each
// job is rescued exactly once. (A row locked by another writer, an ack or
// a cancel, is skipped too; if it is still an orphan, the next tick takes
// it.)
func (s *Store) JobRecover(ctx context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	now := store.Trunc(p.Now)
	byID := make(map[string]store.Orphan, len(p.Orphans))
	var ids, owners, tokens []string
	for _, o := range p.Orphans {
		if validID(o.JobID) {
			byID[o.JobID] = o
			ids, owners, tokens = append(ids, o.JobID), append(owners, o.WorkerID), append(tokens, o.Token)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var won []*store.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := scanJobs(tx.Query(ctx, lockOrphansSQL, ids, owners, tokens))
		if err != nil {
			return fmt.Errorf("lock orphans: %w", err)
		}
		ends := make([]ending, len(rows))
		for i, row := range rows {
			o := byID[row.ID]
			d := decide(row, store.EndOrphaned, nil, p.MaxRescues, now)
			msg := store.RescueMessage(o.WorkerID, p.NodeID)
			node := p.NodeID
			var lastHB *time.Time
			if !o.LastHeartbeatAt.IsZero() {
				t := store.Trunc(o.LastHeartbeatAt)
				lastHB = &t
			}
			ends[i] = ending{by: store.EndedByRescue, row: row, d: d, outcome: d.Outcome, err: &msg, recoveredBy: &node, lastHB: lastHB, lost: true}
		}
		won, err = endDeliveries(ctx, tx, ends, now)
		if err != nil || len(won) == 0 {
			return err
		}
		return addCounter(ctx, tx, "rescues_total", len(won))
	})
	return won, err
}

func addCounter(ctx context.Context, q querier, name string, n int) error {
	_, err := q.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value`, name, n)
	if err != nil {
		return fmt.Errorf("count %s: %w", name, err)
	}
	return nil
}
