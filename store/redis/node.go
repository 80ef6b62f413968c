package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tetherq/tether/store"
)

// node is a server node as the nodes hash keeps it, by id.
type node struct {
	Version   string `json:"v"`
	StartedAt int64  `json:"s"`
	LastHB    int64  `json:"h"`
	StoppedAt *int64 `json:"x,omitempty"` // nodestop.lua
}

// NodeHeartbeat registers or refreshes a server node: one HSET, which also
// drops a stop.
func (s *Store) NodeHeartbeat(ctx context.Context, p *store.NodeHeartbeatParams) error {
	v, _ := json.Marshal(node{Version: p.Version, StartedAt: store.Trunc(p.StartedAt).UnixMilli(),
		LastHB: store.Trunc(p.Now).UnixMilli()})
	if err := s.rdb.HSet(ctx, s.prefix+"nodes", p.ID, v).Err(); err != nil {
		return fmt.Errorf("heartbeat node %q: %w", p.ID, err)
	}
	return nil
}

// NodeStop marks a node stopped.
func (s *Store) NodeStop(ctx context.Context, p *store.NodeStopParams) error {
	if _, err := s.call(ctx, "nodestop", p.ID, unixMS(store.Trunc(p.Now))); err != nil {
		return fmt.Errorf("stop node %q: %w", p.ID, err)
	}
	return nil
}

// NodeList lists server nodes, most recently heard from first.
func (s *Store) NodeList(ctx context.Context, _ *store.NodeListParams) ([]*store.Node, error) {
	m, err := s.rdb.HGetAll(ctx, s.prefix+"nodes").Result()
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	out := make([]*store.Node, 0, len(m))
	for id, v := range m {
		var n node
		if json.Unmarshal([]byte(v), &n) != nil {
			continue
		}
		sn := &store.Node{ID: id, Version: n.Version, StartedAt: fromMS(n.StartedAt), LastHeartbeatAt: fromMS(n.LastHB)}
		if n.StoppedAt != nil {
			t := fromMS(*n.StoppedAt)
			sn.StoppedAt = &t
		}
		out = append(out, sn)
	}
	slices.SortFunc(out, func(a, b *store.Node) int {
		if c := b.LastHeartbeatAt.Compare(a.LastHeartbeatAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
