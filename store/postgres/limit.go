package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// limitedQueues is what this replica knows of which queues have limits,
// so that a lease of queues without limits keeps its merged one-statement
// path and reads nothing more. It may be stale, but only safely: the
// one-statement lease passes over a queue whose limits it sees (its paused
// probe checks limits too), so a lease misled into that path takes nothing
// from a limited queue; and a lease misled into the limited path finds no
// limits under its lock and takes what an unlimited lease would. A change
// of limits notifies every replica (a wake-up of all the queue's waiters),
// which forgets what it knew before the waiters wake; it also forgets after
// limitsFresh, for the notifications lost while a listener reconnects.
type limitedQueues struct {
	mu     sync.Mutex
	names  map[string]bool
	readAt time.Time // zero: forgotten
}

// limitsFresh is how long a replica trusts what it read of limits.
const limitsFresh = time.Second

// forget makes the next lease read limits again.
func (l *limitedQueues) forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readAt = time.Time{}
}

// any reports whether a queue of queues has limits, reading them when
// forgotten or stale.
func (s *Store) anyLimited(ctx context.Context, queues []string) (bool, error) {
	l := &s.limited
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.readAt.IsZero() || time.Since(l.readAt) > limitsFresh {
		readAt := time.Now()
		names, err := collectStrings(s.pool.Query(ctx, `SELECT name FROM queues WHERE limits IS NOT NULL`))
		if err != nil {
			return false, fmt.Errorf("read limited queues: %w", err)
		}
		l.names = make(map[string]bool, len(names))
		for _, n := range names {
			l.names[n] = true
		}
		l.readAt = readAt
	}
	for _, q := range queues {
		if l.names[q] {
			return true, nil
		}
	}
	return false, nil
}

// QueueSetLimits writes the queue's limits and marks its running jobs
// limited, so that the next limited lease counts them. It takes the
// queue's row first (the order limited leases take it in), then locks
// jobs against writes for the rest of its transaction: a lease that read
// the queue as unlimited and is still in flight finishes first, so its
// jobs are marked too, and none starts until the limits are committed.
// Job writes wait for it a moment; limits change rarely. The commit
// notifies every replica's waiters of the queue.
func (s *Store) QueueSetLimits(ctx context.Context, p *store.QueueSetLimitsParams) (*store.Queue, error) {
	limits := p.Limits
	if limits.None() {
		limits = nil
	}
	var encoded *string
	if limits != nil {
		b, err := json.Marshal(limits)
		if err != nil {
			return nil, err
		}
		e := string(b)
		encoded = &e
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		// A changed rate starts from a full bucket: its state is in the
		// old rate's intervals.
		if _, err := tx.Exec(ctx, `INSERT INTO queues (name, limits) VALUES ($1, $2::jsonb)
			ON CONFLICT (name) DO UPDATE SET limits = excluded.limits, rate_tat = 0`, p.Name, encoded); err != nil {
			return fmt.Errorf("set limits of %q: %w", p.Name, err)
		}
		if _, err := tx.Exec(ctx, `LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("lock jobs: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM key_rates WHERE queue = $1`, p.Name); err != nil {
			return fmt.Errorf("reset key rates of %q: %w", p.Name, err)
		}
		if limits != nil {
			if _, err := tx.Exec(ctx, `UPDATE jobs SET limited = true
				WHERE state = 'running' AND queue = $1 AND NOT limited`, p.Name); err != nil {
				return fmt.Errorf("count running jobs of %q: %w", p.Name, err)
			}
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, s.channel, store.WakeupMessage(p.Name, 0))
		return err
	})
	if err != nil {
		return nil, err
	}
	s.limited.forget()
	queues, err := s.QueueList(ctx, &store.QueueListParams{Now: p.Now})
	if err != nil {
		return nil, err
	}
	return store.QueueLimited(queues, p.Name, limits), nil
}

// queueLimits adds the queues with limits to byName (by get), and the
// limits and throttle counts of the queues there.
func (s *Store) queueLimits(ctx context.Context, byName map[string]*store.Queue, get func(string) *store.Queue) error {
	rows, err := s.pool.Query(ctx, `SELECT name, limits::text FROM queues WHERE limits IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("read queue limits: %w", err)
	}
	var name, encoded string
	_, err = pgx.ForEachRow(rows, []any{&name, &encoded}, func() error {
		var l store.Limits
		if err := json.Unmarshal([]byte(encoded), &l); err != nil {
			return fmt.Errorf("limits of %q: %w", name, err)
		}
		get(name).Limits = &l
		return nil
	})
	if err != nil {
		return fmt.Errorf("read queue limits: %w", err)
	}
	rows, err = s.pool.Query(ctx, `SELECT queue, reason, n FROM queue_throttles`)
	if err != nil {
		return fmt.Errorf("read throttle counts: %w", err)
	}
	var reason string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&name, &reason, &n}, func() error {
		q, ok := byName[name]
		if !ok {
			return nil // listed for its jobs, pause or limits only
		}
		if q.Throttled == nil {
			q.Throttled = map[store.ThrottleReason]int64{}
		}
		q.Throttled[store.ThrottleReason(reason)] = n
		return nil
	})
	if err != nil {
		return fmt.Errorf("read throttle counts: %w", err)
	}
	return nil
}
