package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// WorkerRegister registers or refreshes a worker.
func (s *Store) WorkerRegister(ctx context.Context, p *store.WorkerRegisterParams) (*store.Worker, error) {
	now := store.Trunc(p.Now)
	w := &store.Worker{ID: p.ID, Queues: orEmpty(p.Queues), Labels: p.Labels, LastHeartbeatAt: now, InFlight: []string{}}
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	err := s.lax.QueryRow(ctx, `INSERT INTO workers (id, queues, labels, started_at, last_heartbeat_at)
		VALUES ($1, $2, $3, $4, $4) ON CONFLICT (id) DO UPDATE SET queues = excluded.queues,
		labels = excluded.labels, last_heartbeat_at = excluded.last_heartbeat_at
		RETURNING started_at`, p.ID, w.Queues, w.Labels, now).Scan(&w.StartedAt)
	if err != nil {
		return nil, fmt.Errorf("register worker %q: %w", p.ID, err)
	}
	w.StartedAt = w.StartedAt.UTC()
	return w, nil
}

// heartbeatSQL touches worker $1 at $2, takes the jobs to report lost
// (held false), and lists the jobs it holds with their cancel flag.
const heartbeatSQL = `WITH worker AS (` + touchWorkerSQL + `), lost AS (
		UPDATE attempts SET lost_pending = NULL WHERE worker_id = $1 AND lost_pending RETURNING job_id
	)
	SELECT false, job_id::text, false FROM lost
	UNION ALL
	SELECT true, id::text, cancel_requested FROM jobs WHERE worker_id = $1 AND state = 'running'`

// WorkerHeartbeat records a sign of life and reports cancelled and lost
// jobs, in one statement.
func (s *Store) WorkerHeartbeat(ctx context.Context, p *store.WorkerHeartbeatParams) (*store.WorkerHeartbeatResult, error) {
	// Durable: a heartbeat hands out the lost list, and a list handed out
	// and then forgotten in a crash would be handed out again.
	rows, err := s.pool.Query(ctx, heartbeatSQL, p.ID, store.Trunc(p.Now))
	if err != nil {
		return nil, fmt.Errorf("heartbeat %q: %w", p.ID, err)
	}
	res := &store.WorkerHeartbeatResult{Cancel: []string{}, Lost: []string{}}
	holds := map[string]bool{}
	var held, cancel bool
	var id string
	_, err = pgx.ForEachRow(rows, []any{&held, &id, &cancel}, func() error {
		switch {
		case !held:
			res.Lost = append(res.Lost, id)
		case cancel:
			res.Cancel = append(res.Cancel, id)
			holds[id] = true
		default:
			holds[id] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat %q: %w", p.ID, err)
	}
	for _, id := range p.InFlight {
		if !holds[id] {
			res.Lost = append(res.Lost, id)
		}
	}
	slices.Sort(res.Lost)
	res.Lost = slices.Compact(res.Lost)
	return res, nil
}

// WorkerDeregister removes a worker and releases its jobs at once.
func (s *Store) WorkerDeregister(ctx context.Context, p *store.WorkerDeregisterParams) error {
	now := store.Trunc(p.Now)
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM workers WHERE id = $1`, p.ID)
		if err != nil {
			return fmt.Errorf("deregister %q: %w", p.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		// Its long-polls end on every replica (store.WorkerEnded), at
		// commit.
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, s.channel,
			store.WakeupMessage(store.WorkerEnded(p.ID), 0)); err != nil {
			return fmt.Errorf("tell %q's polls: %w", p.ID, err)
		}
		rows, err := scanJobs(tx.Query(ctx, `SELECT `+jobColumns+` FROM jobs
			WHERE worker_id = $1 AND state = 'running' ORDER BY id FOR UPDATE`, p.ID))
		if err != nil {
			return fmt.Errorf("lock jobs of %q: %w", p.ID, err)
		}
		ends := make([]ending, len(rows))
		for i, row := range rows {
			d := decide(row, store.EndRelease, nil, 0, now)
			ends[i] = ending{by: store.EndedByDeregister, row: row, d: d, outcome: d.Outcome}
		}
		_, err = endDeliveries(ctx, tx, ends, now)
		return err
	})
}

// WorkerList lists workers with the jobs they hold.
func (s *Store) WorkerList(ctx context.Context, p *store.WorkerListParams) ([]*store.Worker, error) {
	rows, err := s.pool.Query(ctx, `SELECT w.id, w.queues, w.labels, w.started_at, w.last_heartbeat_at,
			coalesce((SELECT array_agg(j.id::text ORDER BY j.id) FROM jobs j
				WHERE j.worker_id = w.id AND j.state = 'running'), '{}')
		FROM workers w WHERE w.last_heartbeat_at >= $1 ORDER BY w.id COLLATE "C"`, store.Trunc(p.SeenAfter))
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Worker, error) {
		w := &store.Worker{}
		err := r.Scan(&w.ID, &w.Queues, &w.Labels, &w.StartedAt, &w.LastHeartbeatAt, &w.InFlight)
		w.StartedAt, w.LastHeartbeatAt = w.StartedAt.UTC(), w.LastHeartbeatAt.UTC()
		w.Queues = orEmpty(w.Queues)
		if w.Labels == nil {
			w.Labels = map[string]string{}
		}
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	return out, nil
}

func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
