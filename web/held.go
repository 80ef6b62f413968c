package web

import (
	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// heldPanel lists the jobs held right now by suspect or dead workers: the
// orphans the scheduler is about to rescue.
type heldPanel struct {
	Jobs      []heldRow
	DeadAfter string
	Back      string
}

type heldRow struct {
	JobID, Queue, Kind string
	Attempt, Max       int
	WorkerID           string
	WorkerState        string
	LastSeen           instant
	Leased             instant
	// RescueIn says when the worker counts as dead: "due" once it is.
	RescueIn string
}

// maxHeld bounds the awaiting-recovery list.
const maxHeld = 200

func (d *dash) heldPanel(rq *request) (templ.Component, error) {
	held, err := d.heldBySilent(rq)
	if err != nil {
		return nil, err
	}
	m := heldPanel{DeadAfter: span(d.cfg.DeadAfter), Back: rq.back}
	for _, h := range held {
		j := h.Job
		row := heldRow{JobID: j.ID, Queue: j.Queue, Kind: j.Kind, Attempt: j.Attempt, Max: j.MaxAttempts,
			WorkerState: string(d.workerState(h.OwnerLastHeartbeatAt, rq.now)),
			LastSeen:    instantAt(h.OwnerLastHeartbeatAt, rq.now), Leased: instantOf(j.StartedAt, rq.now), RescueIn: "due"}
		if j.Lease != nil {
			row.WorkerID = j.Lease.WorkerID
		}
		if left := h.OwnerLastHeartbeatAt.Add(d.cfg.DeadAfter).Sub(rq.now); left > 0 {
			row.RescueIn = "in " + span(left)
		}
		m.Jobs = append(m.Jobs, row)
	}
	return heldView(m), nil
}

// heldBySilent lists up to maxHeld jobs held by suspect or dead workers:
// awaiting recovery.
func (d *dash) heldBySilent(rq *request) ([]store.HeldJob, error) {
	if d.ins == nil {
		return nil, errNoInsights
	}
	nodes, err := d.store.NodeList(rq.ctx, &store.NodeListParams{})
	if err != nil {
		return nil, err
	}
	live := store.LiveNodeIDs(nodes, d.cfg.NodeID, rq.now, d.cfg.DeadAfter)
	// Suspect begins after two missed heartbeats, as store.WorkerStateAt has it.
	since := rq.now.Add(-2 * d.cfg.HeartbeatInterval)
	return d.ins.JobListHeldBySilent(rq.ctx, &store.JobListHeldBySilentParams{SilentSince: since, LiveIDs: live, Limit: maxHeld})
}
