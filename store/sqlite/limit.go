package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tetherq/tether/store"
)

// The writer knows every queue's limits (writer.limits): this Store is
// the only writer of its file (PATH.lock), and the map changes only under
// the writer's lock, after the commit that wrote them. A lease of queues
// without limits therefore reads nothing more than before, and an ending
// knows without a read whether it freed a slot someone may wait for.

// loadLimits reads every queue's limits into the writer's map.
func (w *writer) loadLimits(ctx context.Context) error {
	var rows []struct {
		Name   string `db:"name"`
		Limits string `db:"limits"`
	}
	if err := w.conn.SelectContext(ctx, &rows, `SELECT name, limits FROM queues WHERE limits IS NOT NULL`); err != nil {
		return fmt.Errorf("read queue limits: %w", err)
	}
	w.limits = make(map[string]*store.Limits, len(rows))
	for _, r := range rows {
		var l store.Limits
		if err := json.Unmarshal([]byte(r.Limits), &l); err != nil {
			return fmt.Errorf("limits of %q: %w", r.Name, err)
		}
		w.limits[r.Name] = &l
	}
	return nil
}

// QueueSetLimits writes the queue's limits and marks its running jobs
// limited, so the next lease counts them. Setting or clearing limits
// wakes every waiting leaser of the queue: a limit raised or gone may let
// them lease.
func (s *Store) QueueSetLimits(ctx context.Context, p *store.QueueSetLimitsParams) (*store.Queue, error) {
	limits := p.Limits
	if limits.None() {
		limits = nil
	}
	var encoded any // NULL: none
	if limits != nil {
		b, err := json.Marshal(limits)
		if err != nil {
			return nil, err
		}
		encoded = string(b)
	}
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		// A changed rate starts from a full bucket: its state is in the
		// old rate's intervals.
		_, err := tx.ExecContext(ctx, `INSERT INTO queues (name, paused, limits) VALUES (?, 0, ?)
			ON CONFLICT (name) DO UPDATE SET limits = excluded.limits, rate_tat = 0`, p.Name, encoded)
		if err != nil {
			return false, fmt.Errorf("set limits of %q: %w", p.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM key_rates WHERE queue = ?`, p.Name); err != nil {
			return false, fmt.Errorf("reset key rates of %q: %w", p.Name, err)
		}
		if limits != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE jobs SET limited = 1
				WHERE state = 'running' AND queue = ? AND limited = 0`, p.Name); err != nil {
				return false, fmt.Errorf("count running jobs of %q: %w", p.Name, err)
			}
		}
		tx.setLimits(p.Name, limits)
		tx.resume(p.Name)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	queues, err := s.QueueList(ctx, &store.QueueListParams{Now: p.Now})
	if err != nil {
		return nil, err
	}
	return store.QueueLimited(queues, p.Name, limits), nil
}

// queueLimits adds the queues with limits to byName (by get), and the
// limits and throttle counts of the queues there.
func (s *Store) queueLimits(ctx context.Context, byName map[string]*store.Queue, get func(string) *store.Queue) error {
	var limited []struct {
		Name   string `db:"name"`
		Limits string `db:"limits"`
	}
	if err := s.r.SelectContext(ctx, &limited, `SELECT name, limits FROM queues WHERE limits IS NOT NULL`); err != nil {
		return fmt.Errorf("read queue limits: %w", err)
	}
	for _, r := range limited {
		var l store.Limits
		if err := json.Unmarshal([]byte(r.Limits), &l); err != nil {
			return fmt.Errorf("limits of %q: %w", r.Name, err)
		}
		get(r.Name).Limits = &l
	}
	var throttles []struct {
		Queue  string `db:"queue"`
		Reason string `db:"reason"`
		N      int64  `db:"n"`
	}
	if err := s.r.SelectContext(ctx, &throttles, `SELECT queue, reason, n FROM queue_throttles`); err != nil {
		return fmt.Errorf("read throttle counts: %w", err)
	}
	for _, r := range throttles {
		q, ok := byName[r.Queue]
		if !ok {
			continue // listed for its jobs, pause or limits only
		}
		if q.Throttled == nil {
			q.Throttled = map[store.ThrottleReason]int64{}
		}
		q.Throttled[store.ThrottleReason(r.Reason)] = r.N
	}
	return nil
}

// rateTAT reads a queue's rate state, and whether it is paused.
func rateTAT(ctx context.Context, tx *txn, queue string) (tat int64, paused bool, err error) {
	var row struct {
		TAT    int64 `db:"rate_tat"`
		Paused bool  `db:"paused"`
	}
	err = tx.GetContext(ctx, &row, `SELECT rate_tat, paused FROM queues WHERE name = ?`, queue)
	if err == sql.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read rate of %q: %w", queue, err)
	}
	return row.TAT, row.Paused, nil
}
