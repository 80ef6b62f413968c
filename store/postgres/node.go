package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// NodeHeartbeat registers or refreshes a server node; it clears a stop.
func (s *Store) NodeHeartbeat(ctx context.Context, p *store.NodeHeartbeatParams) error {
	_, err := s.lax.Exec(ctx, `INSERT INTO nodes (id, version, started_at, last_heartbeat_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET version = excluded.version,
		last_heartbeat_at = excluded.last_heartbeat_at, stopped_at = NULL`,
		p.ID, p.Version, store.Trunc(p.StartedAt), store.Trunc(p.Now))
	if err != nil {
		return fmt.Errorf("heartbeat node %q: %w", p.ID, err)
	}
	return nil
}

// NodeStop marks a node stopped. Unlike a heartbeat it commits durably: a
// node says it is gone once, on its way out.
func (s *Store) NodeStop(ctx context.Context, p *store.NodeStopParams) error {
	_, err := s.pool.Exec(ctx, `UPDATE nodes SET stopped_at = $1 WHERE id = $2`, store.Trunc(p.Now), p.ID)
	if err != nil {
		return fmt.Errorf("stop node %q: %w", p.ID, err)
	}
	return nil
}

// NodeList lists server nodes, most recently heard from first.
func (s *Store) NodeList(ctx context.Context, _ *store.NodeListParams) ([]*store.Node, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, version, started_at, last_heartbeat_at, stopped_at FROM nodes
		ORDER BY last_heartbeat_at DESC, id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Node, error) {
		n := &store.Node{}
		var started, last time.Time
		err := r.Scan(&n.ID, &n.Version, &started, &last, &n.StoppedAt)
		n.StartedAt, n.LastHeartbeatAt, n.StoppedAt = started.UTC(), last.UTC(), utc(n.StoppedAt)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return out, nil
}
