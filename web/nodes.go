package web

import (
	"slices"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// nodesPanel lists the server replicas sharing the store, live or gone,
// with how many rescues each made: the recovery that every replica runs,
// seen from all of them.
type nodesPanel struct {
	Heading   string
	Nodes     []nodeRow
	Live      int
	Gone      int
	DeadAfter string
	// Counted is false when the backend cannot count rescues.
	Counted bool
	Window  string // how far back rescues are counted
}

type nodeRow struct {
	ID, Version string
	State       string
	Self        bool
	Started     instant
	LastHeard   instant
	// Stopped is set when the node said it shut down; a gone node without
	// it fell silent.
	Stopped instant
	Rescues int64
}

// rescueCountWindow is how far back the rescues of each node are counted:
// as long as the throughput history is kept.
const rescueCountWindow = store.ThroughputRetention

func (d *dash) nodesPanel(rq *request) (templ.Component, error) {
	nodes, err := d.store.NodeList(rq.ctx, &store.NodeListParams{})
	if err != nil {
		return nil, err
	}
	m := nodesPanel{Heading: rq.heading("Nodes"), DeadAfter: span(d.cfg.DeadAfter), Window: span(rescueCountWindow)}
	var rescues map[string]int64
	if d.ins != nil {
		rescues, err = d.ins.RescueCount(rq.ctx, &store.RescueCountParams{Since: rq.now.Add(-rescueCountWindow)})
		if err != nil {
			return nil, err
		}
		m.Counted = true
	}
	// The live as recovery sees them (this node always among them), then
	// the gone; each part most recently heard from first, as NodeList
	// answers.
	live := store.LiveNodeIDs(nodes, d.cfg.NodeID, rq.now, d.cfg.DeadAfter)
	var gone []nodeRow
	for _, n := range nodes {
		row := nodeRow{ID: n.ID, Version: n.Version, State: string(store.NodeGone), Self: n.ID == d.cfg.NodeID,
			Started: instantAt(n.StartedAt, rq.now), LastHeard: instantAt(n.LastHeartbeatAt, rq.now),
			Stopped: instantOf(n.StoppedAt, rq.now), Rescues: rescues[n.ID]}
		if !slices.Contains(live, n.ID) {
			gone = append(gone, row)
			continue
		}
		row.State = string(store.NodeLive)
		m.Nodes = append(m.Nodes, row)
	}
	m.Live, m.Gone = len(m.Nodes), len(gone)
	m.Nodes = append(m.Nodes, gone...)
	return nodesView(&m), nil
}
