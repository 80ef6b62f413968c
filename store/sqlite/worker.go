package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tetherq/tether/store"
)

// WorkerRegister registers or refreshes a worker.
func (s *Store) WorkerRegister(ctx context.Context, p *store.WorkerRegisterParams) (*store.Worker, error) {
	now := store.Trunc(p.Now)
	queues, _ := json.Marshal(orEmpty(p.Queues))
	labels := p.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	labelsJSON, _ := json.Marshal(labels)
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO workers (id, queues, labels, started_at, last_heartbeat_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET queues = excluded.queues,
			labels = excluded.labels, last_heartbeat_at = excluded.last_heartbeat_at`,
			p.ID, string(queues), string(labelsJSON), toMS(now), toMS(now))
		return false, err
	})
	if err != nil {
		return nil, fmt.Errorf("register worker %q: %w", p.ID, err)
	}
	return &store.Worker{ID: p.ID, Queues: orEmpty(p.Queues), Labels: labels, StartedAt: now, LastHeartbeatAt: now}, nil
}

// WorkerHeartbeat records a sign of life and reports cancelled and lost jobs.
func (s *Store) WorkerHeartbeat(ctx context.Context, p *store.WorkerHeartbeatParams) (*store.WorkerHeartbeatResult, error) {
	now := toMS(store.Trunc(p.Now))
	res := &store.WorkerHeartbeatResult{}
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		*res = store.WorkerHeartbeatResult{Cancel: []string{}, Lost: []string{}}
		if err := touchWorker(ctx, tx, p.ID, now); err != nil {
			return false, err
		}
		if err := tx.SelectContext(ctx, &res.Lost, `UPDATE attempts SET lost_pending = NULL
			WHERE worker_id = ? AND lost_pending = 1 RETURNING job_id`, p.ID); err != nil {
			return false, fmt.Errorf("read lost jobs: %w", err)
		}
		var held []struct {
			ID     string `db:"id"`
			Cancel bool   `db:"cancel_requested"`
		}
		if err := tx.SelectContext(ctx, &held, `SELECT id, cancel_requested FROM jobs
			WHERE worker_id = ? AND state = 'running'`, p.ID); err != nil {
			return false, fmt.Errorf("read held jobs: %w", err)
		}
		holds := map[string]bool{}
		for _, h := range held {
			holds[h.ID] = true
			if h.Cancel {
				res.Cancel = append(res.Cancel, h.ID)
			}
		}
		for _, id := range p.InFlight {
			if !holds[id] {
				res.Lost = append(res.Lost, id)
			}
		}
		slices.Sort(res.Lost)
		res.Lost = slices.Compact(res.Lost)
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// WorkerDeregister removes a worker and releases its jobs at once.
func (s *Store) WorkerDeregister(ctx context.Context, p *store.WorkerDeregisterParams) error {
	now := store.Trunc(p.Now)
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM workers WHERE id = ?`, p.ID)
		if err != nil {
			return false, fmt.Errorf("deregister %q: %w", p.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return false, store.ErrNotFound
		}
		var rows []jobRow
		if err := tx.SelectContext(ctx, &rows, `SELECT `+jobColumns+` FROM jobs
			WHERE worker_id = ? AND state = 'running'`, p.ID); err != nil {
			return false, fmt.Errorf("read jobs of %q: %w", p.ID, err)
		}
		es := make([]ending, len(rows))
		for i := range rows {
			d := decide(&rows[i], store.EndRelease, nil, 0, now)
			es[i] = ending{&rows[i], d, attemptEnd{by: store.EndedByDeregister, outcome: d.Outcome, at: toMS(now)}}
		}
		if _, err := endDeliveries(ctx, tx, es); err != nil {
			return false, err
		}
		return len(rows) > 0, nil
	})
	if err == nil {
		s.wake.Signal(store.WorkerEnded(p.ID), 0) // its long-polls end
	}
	return err
}

// WorkerList lists workers with the jobs they hold.
func (s *Store) WorkerList(ctx context.Context, p *store.WorkerListParams) ([]*store.Worker, error) {
	var rows []struct {
		ID        string `db:"id"`
		Queues    string `db:"queues"`
		Labels    string `db:"labels"`
		StartedAt int64  `db:"started_at"`
		LastHB    int64  `db:"last_heartbeat_at"`
	}
	if err := s.r.SelectContext(ctx, &rows, `SELECT id, queues, labels, started_at, last_heartbeat_at
		FROM workers WHERE last_heartbeat_at >= ? ORDER BY id`, toMS(p.SeenAfter)); err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	var held []struct {
		ID       string `db:"id"`
		WorkerID string `db:"worker_id"`
	}
	if err := s.r.SelectContext(ctx, &held, `SELECT id, worker_id FROM jobs WHERE state = 'running'
		ORDER BY id`); err != nil {
		return nil, fmt.Errorf("list held jobs: %w", err)
	}
	byWorker := map[string][]string{}
	for _, h := range held {
		byWorker[h.WorkerID] = append(byWorker[h.WorkerID], h.ID)
	}
	out := make([]*store.Worker, len(rows))
	for i, r := range rows {
		w := &store.Worker{ID: r.ID, StartedAt: fromMS(r.StartedAt), LastHeartbeatAt: fromMS(r.LastHB),
			InFlight: orEmpty(byWorker[r.ID])}
		if json.Unmarshal([]byte(r.Queues), &w.Queues) != nil || w.Queues == nil {
			w.Queues = []string{}
		}
		if json.Unmarshal([]byte(r.Labels), &w.Labels) != nil || w.Labels == nil {
			w.Labels = map[string]string{}
		}
		out[i] = w
	}
	return out, nil
}

func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
