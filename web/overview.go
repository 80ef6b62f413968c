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
	if d.ins != nil {
		mins, err := d.ins.ThroughputList(rq.ctx, &store.ThroughputListParams{From: rq.now.Add(-chartSpan + chartStep), To: rq.now})
		if err != nil {
			return nil, err
		}
		m.RescuesHour = 0
		for _, x := range mins {
			m.RescuesHour += x.Rescued
		}
	}
	return overviewView(m), nil
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
