package postgres

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// pruneJobsSQL deletes up to $3 jobs finished before their cut-off
// (succeeded and cancelled $1, dead $2), oldest first, with their history.
// The ids go through arrays so both deletes stay index lookups.
const pruneJobsSQL = `WITH victims AS (
		(SELECT id FROM jobs WHERE state IN ('succeeded', 'cancelled') AND finished_at < $1
			ORDER BY finished_at LIMIT $3)
		UNION ALL
		(SELECT id FROM jobs WHERE state = 'dead' AND finished_at < $2 ORDER BY finished_at LIMIT $3)
		LIMIT $3
	), gone AS (
		DELETE FROM jobs WHERE id = ANY(ARRAY(SELECT id FROM victims)) RETURNING id
	), history AS (
		DELETE FROM attempts WHERE job_id = ANY(ARRAY(SELECT id FROM gone))
	)
	SELECT count(*) FROM gone`

// JobPrune deletes up to Limit finished jobs past their retention, oldest
// first, with their history; the caller repeats it until a short batch.
// Each end state is read from its own partial index, so a prune costs
// O(Limit).
func (s *Store) JobPrune(ctx context.Context, p *store.JobPruneParams) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, pruneJobsSQL, store.Trunc(p.SucceededBefore), store.Trunc(p.DeadBefore),
		store.LimitOr(p.Limit, store.MaxBatch)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("prune jobs: %w", err)
	}
	return n, nil
}

// Statements of the other prunes: each deletes up to $2 rows older than
// $1. Workers and nodes are small tables, scanned (no index covers
// last_heartbeat_at, so their heartbeats stay HOT updates). A worker goes
// only when it holds no running job; OFFSET 0 keeps that test a probe of
// jobs_running_worker per silent worker: as an anti-join, with statistics
// that had seen no running job, the planner read every running job into
// memory and compared each with every silent worker. The workers found
// are an array, deleted by primary key (as IN, a join by a filter).
const (
	pruneKeysSQL = `DELETE FROM idempotency_keys WHERE key IN (
		SELECT key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)`
	pruneWorkersSQL = `DELETE FROM workers WHERE id = ANY(ARRAY(
		SELECT id FROM workers w WHERE last_heartbeat_at < $1 AND NOT EXISTS (
			SELECT 1 FROM jobs j WHERE j.worker_id = w.id AND j.state = 'running' OFFSET 0) LIMIT $2))`
	pruneNodesSQL = `DELETE FROM nodes WHERE id IN (
		SELECT id FROM nodes WHERE last_heartbeat_at < $1 LIMIT $2)`
)

// KeyPrune deletes expired idempotency keys and webhook delivery ids.
func (s *Store) KeyPrune(ctx context.Context, p *store.KeyPruneParams) (int, error) {
	n, err := s.deleteSome(ctx, "prune idempotency keys", pruneKeysSQL, store.Trunc(p.Now), store.LimitOr(p.Limit, store.MaxBatch))
	if err != nil {
		return n, err
	}
	// A key rate whose tat has passed reads as a full bucket, as no row
	// does (store.KeyRateSlack).
	rates, err := s.deleteSome(ctx, "prune key rates", `DELETE FROM key_rates WHERE (queue, key) IN (
		SELECT queue, key FROM key_rates WHERE tat < $1 LIMIT $2)`,
		store.Micros(p.Now.Add(-store.KeyRateSlack)), store.LimitOr(p.Limit, store.MaxBatch))
	return n + rates, err
}

// WorkerPrune deletes long-silent workers that hold nothing.
func (s *Store) WorkerPrune(ctx context.Context, p *store.WorkerPruneParams) (int, error) {
	return s.deleteSome(ctx, "prune workers", pruneWorkersSQL, store.Trunc(p.SilentBefore), store.LimitOr(p.Limit, store.MaxBatch))
}

// NodePrune deletes long-silent nodes.
func (s *Store) NodePrune(ctx context.Context, p *store.NodePruneParams) (int, error) {
	return s.deleteSome(ctx, "prune nodes", pruneNodesSQL, store.Trunc(p.SilentBefore), store.LimitOr(p.Limit, store.MaxBatch))
}

// deleteSome runs one bounded delete and returns how many rows it deleted;
// what names it in an error.
func (s *Store) deleteSome(ctx context.Context, what, query string, args ...any) (int, error) {
	tag, err := s.pool.Exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return int(tag.RowsAffected()), nil
}
