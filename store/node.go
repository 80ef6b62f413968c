package store

import "time"

// Node is a server process. Nodes heartbeat every tick in their own table;
// they are listed apart from workers and never considered dead by
// themselves. A node that shuts down says so (NodeStop): it is gone at once
// rather than after DeadAfter, and its row stays, as a silent one does,
// until pruned with the silent workers.
type Node struct {
	ID              string
	Version         string
	StartedAt       time.Time
	LastHeartbeatAt time.Time
	StoppedAt       *time.Time // set by NodeStop, cleared by a heartbeat
}

// NodeState is a node's liveness as seen at some instant.
type NodeState string

// Node states.
const (
	NodeLive NodeState = "live"
	NodeGone NodeState = "gone"
)

// StateAt says whether n is live at now: heard from within deadAfter and
// not stopped since. Dead at exactly deadAfter, as workers are (StateAt).
func (n *Node) StateAt(now time.Time, deadAfter time.Duration) NodeState {
	if n.StoppedAt != nil || now.Sub(n.LastHeartbeatAt) >= deadAfter {
		return NodeGone
	}
	return NodeLive
}

// LiveNodeIDs returns the ids of the nodes live at now, plus self (when not
// empty) whatever its row says: a node never considers itself dead. These
// are the owners that recovery and the dashboard treat as alive.
func LiveNodeIDs(nodes []*Node, self string, now time.Time, deadAfter time.Duration) []string {
	var live []string
	if self != "" {
		live = append(live, self)
	}
	for _, n := range nodes {
		if n.ID != self && n.StateAt(now, deadAfter) == NodeLive {
			live = append(live, n.ID)
		}
	}
	return live
}
