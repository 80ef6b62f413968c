package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tetherq/tether/store"
)

// NodeHeartbeat registers or refreshes a server node; it clears a stop.
func (s *Store) NodeHeartbeat(ctx context.Context, p *store.NodeHeartbeatParams) error {
	return s.tx(ctx, func(tx *txn) (bool, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO nodes (id, version, started_at, last_heartbeat_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version,
			last_heartbeat_at = excluded.last_heartbeat_at, stopped_at = NULL`,
			p.ID, p.Version, toMS(store.Trunc(p.StartedAt)), toMS(store.Trunc(p.Now)))
		if err != nil {
			return false, fmt.Errorf("heartbeat node %q: %w", p.ID, err)
		}
		return false, nil
	})
}

// NodeStop marks a node stopped.
func (s *Store) NodeStop(ctx context.Context, p *store.NodeStopParams) error {
	return s.tx(ctx, func(tx *txn) (bool, error) {
		_, err := tx.ExecContext(ctx, `UPDATE nodes SET stopped_at = ? WHERE id = ?`, toMS(store.Trunc(p.Now)), p.ID)
		if err != nil {
			return false, fmt.Errorf("stop node %q: %w", p.ID, err)
		}
		return false, nil
	})
}

// NodeList lists server nodes, most recently heard from first.
func (s *Store) NodeList(ctx context.Context, _ *store.NodeListParams) ([]*store.Node, error) {
	var rows []struct {
		ID        string        `db:"id"`
		Version   string        `db:"version"`
		StartedAt int64         `db:"started_at"`
		LastHB    int64         `db:"last_heartbeat_at"`
		StoppedAt sql.NullInt64 `db:"stopped_at"`
	}
	if err := s.r.SelectContext(ctx, &rows, `SELECT id, version, started_at, last_heartbeat_at, stopped_at
		FROM nodes ORDER BY last_heartbeat_at DESC, id`); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	out := make([]*store.Node, len(rows))
	for i, r := range rows {
		out[i] = &store.Node{ID: r.ID, Version: r.Version, StartedAt: fromMS(r.StartedAt),
			LastHeartbeatAt: fromMS(r.LastHB), StoppedAt: timePtr(r.StoppedAt)}
	}
	return out, nil
}
