package scheduler

import (
	"context"
	"time"

	"github.com/tetherq/tether/store"
)

// nodeBeat registers the server node and refreshes its heartbeat every tick.
// Other nodes count it live while the heartbeat is younger than DeadAfter;
// the node itself never needs it, as it always counts itself live.
type nodeBeat struct {
	store      store.Store
	id         string
	version    string
	startedAt  time.Time
	registered bool
}

// runOnce heartbeats the node; n is 1 on the first success (registration)
// and 0 after, so only the registration is logged.
func (b *nodeBeat) runOnce(ctx context.Context, now time.Time) (int, error) {
	err := b.store.NodeHeartbeat(ctx, &store.NodeHeartbeatParams{
		ID: b.id, Version: b.version, StartedAt: b.startedAt, Now: now,
	})
	if err != nil {
		return 0, err // the log line names the task; the store names the node
	}
	if b.registered {
		return 0, nil
	}
	b.registered = true
	return 1, nil
}

// stopTimeout bounds the shutdown's last write, the node's stop.
const stopTimeout = 5 * time.Second

// stop records that the node shut down, so other nodes and /v1/nodes see
// it gone at once rather than after DeadAfter.
func (b *nodeBeat) stop(ctx context.Context, now time.Time) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	return b.store.NodeStop(ctx, &store.NodeStopParams{ID: b.id, Now: now})
}
