package sqlite

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// depthPruneSQL drops a batch of expired minutes, found by the minute
// index, whatever the number of queues.
const depthPruneSQL = `DELETE FROM queue_depth WHERE (queue, minute) IN (
	SELECT queue, minute FROM queue_depth INDEXED BY queue_depth_minute WHERE minute < ? LIMIT ?)`

// depthListSQL reads one range of the primary key, one sample per step:
// SQLite takes a bare column's value from the row that holds the max().
const depthListSQL = `SELECT minute, available, scheduled, max(available + scheduled) AS total FROM queue_depth
	WHERE queue = ? AND minute >= ? AND minute < ? GROUP BY minute / ? ORDER BY minute`

// QueueDepthRoll writes the minute's samples and drops expired minutes in
// one transaction: a few hundred rows at most.
func (s *Store) QueueDepthRoll(ctx context.Context, p *store.QueueDepthRollParams) (int, error) {
	minute := toMS(p.Now) / 60_000
	cutoff := toMS(p.Now.Add(-store.DepthRetention)) / 60_000
	depths := p.Depths[:min(len(p.Depths), store.MaxDepthQueues)]
	var n int
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		n = 0
		for _, d := range depths {
			_, err := tx.ExecContext(ctx, `INSERT INTO queue_depth (queue, minute, available, scheduled) VALUES (?, ?, ?, ?)
				ON CONFLICT (queue, minute) DO UPDATE SET available = excluded.available, scheduled = excluded.scheduled`,
				d.Queue, minute, d.Available, d.Scheduled)
			if err != nil {
				return false, fmt.Errorf("record the depth of %q: %w", d.Queue, err)
			}
			n++
		}
		res, err := tx.ExecContext(ctx, depthPruneSQL,
			cutoff, store.DepthPruneBatch)
		if err != nil {
			return false, fmt.Errorf("drop old queue depths: %w", err)
		}
		dropped, err := res.RowsAffected()
		n += int(dropped)
		return false, err
	})
	return n, err
}

// QueueDepthList reads one range of the primary key (depthListSQL).
func (s *Store) QueueDepthList(ctx context.Context, p *store.QueueDepthListParams) ([]store.QueueDepth, error) {
	from, to := depthRange(p)
	var rows []struct {
		Minute    int64 `db:"minute"`
		Available int64 `db:"available"`
		Scheduled int64 `db:"scheduled"`
		Total     int64 `db:"total"`
	}
	err := s.r.SelectContext(ctx, &rows, depthListSQL, p.Queue, from, to, p.DepthStepMinutes())
	if err != nil {
		return nil, fmt.Errorf("list the depth of %q: %w", p.Queue, err)
	}
	out := make([]store.QueueDepth, len(rows))
	for i, r := range rows {
		out[i] = store.QueueDepth{Queue: p.Queue, Minute: fromMS(r.Minute * 60_000), Available: r.Available, Scheduled: r.Scheduled}
	}
	return out, nil
}

// depthRange is the Unix minutes [from, to) a listing covers: Until's
// minute is in when Until is past its start, and no more than
// MaxDepthMinutes.
func depthRange(p *store.QueueDepthListParams) (from, to int64) {
	from = toMS(p.Since) / 60_000
	to = (toMS(p.Until) + 59_999) / 60_000
	return max(from, to-int64(store.MaxDepthMinutes)), to
}
