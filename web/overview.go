package web

import (
	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// overviewPanel is the overview's headline numbers: jobs by state, workers
// by liveness, rescues in the last hour and the longest wait.
type overviewPanel struct {
	Jobs                []stateCount
	Retrying            int64
	Live, Suspect, Dead int
	// RescuesHour is -1 when the backend cannot count it.
	RescuesHour   int64
	RescuesTotal  int64
	OldestWaiting string
	Base          string
	Empty         bool
	// Attention lists what needs a person, most urgent first; empty when
	// nothing does.
	Attention []attention
}

// attention is one thing on the overview that needs a person: how many,
// what, and the page that deals with it.
type attention struct {
	N    string
	What string
	Href string
}

func (d *dash) overviewPanel(rq *request) (templ.Component, error) {
	stats, err := d.store.StatsGet(rq.ctx, &store.StatsGetParams{Now: rq.now})
	if err != nil {
		return nil, err
	}
	queues, err := d.queues(rq)
	if err != nil {
		return nil, err
	}
	workers, err := d.store.WorkerList(rq.ctx, &store.WorkerListParams{})
	if err != nil {
		return nil, err
	}
	m := overviewPanel{RescuesTotal: stats.RescuesTotal, RescuesHour: -1, OldestWaiting: "—", Base: rq.base}
	var total int64
	for _, st := range store.States {
		total += stats.Jobs[st]
	}
	m.Empty = total == 0 && len(workers) == 0
	for _, st := range store.States {
		m.Jobs = append(m.Jobs, stateCount{State: string(st), N: stats.Jobs[st], Width: percent(stats.Jobs[st], total)})
	}
	oldest := rq.now
	for _, q := range queues {
		m.Retrying += q.Retrying
		if q.OldestAvailableAt != nil && q.OldestAvailableAt.Before(oldest) {
			oldest = *q.OldestAvailableAt
		}
	}
	if oldest.Before(rq.now) {
		m.OldestWaiting = roughly(rq.now.Sub(oldest))
	}
	for _, w := range workers {
		switch d.workerState(w.LastHeartbeatAt, rq.now) {
		case store.WorkerLive:
			m.Live++
		case store.WorkerSuspect:
			m.Suspect++
		default:
			m.Dead++
		}
	}
	held := 0
	if d.ins != nil {
		h, err := d.heldBySilent(rq)
		if err != nil {
			return nil, err
		}
		held = len(h)
		mins, err := d.ins.ThroughputList(rq.ctx, &store.ThroughputListParams{From: rq.now.Add(-chartSpan + chartStep), To: rq.now})
		if err != nil {
			return nil, err
		}
		m.RescuesHour = 0
		for _, x := range mins {
			m.RescuesHour += x.Rescued
		}
	}
	m.Attention = needsAttention(stats.Jobs[store.StateDead], m.Suspect, held)
	return overviewView(m), nil
}

// needsAttention words what needs a person: dead jobs to retry or delete,
// suspect workers, and jobs held by silent workers, awaiting recovery (at
// most maxHeld are counted).
func needsAttention(dead int64, suspect, held int) []attention {
	var out []attention
	if dead > 0 {
		out = append(out, attention{number(dead), "dead job" + plural(int(min(dead, 2))) + " to retry or delete", "/dead"})
	}
	if held > 0 {
		n := number(int64(held))
		if held >= maxHeld {
			n += "+"
		}
		out = append(out, attention{n, "job" + plural(held) + " awaiting recovery from a silent worker", "/orphans"})
	}
	if suspect > 0 {
		out = append(out, attention{number(int64(suspect)), "suspect worker" + plural(suspect) + ", late with heartbeats", "/workers"})
	}
	return out
}

// stateHref is where a state's count leads.
func stateHref(state string) string {
	switch store.State(state) {
	case store.StateDead:
		return "/dead"
	default:
		return withQuery("/jobs", "state", state)
	}
}
