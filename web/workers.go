package web

import (
	"cmp"
	"maps"
	"slices"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// workersPanel lists workers, live first, with their liveness, last
// heartbeat, labels and the jobs they hold.
type workersPanel struct {
	Heading                 string
	Workers                 []workerRow
	Live, Suspect, Dead     int
	DeadAfter, HeartbeatDue string
	Base                    string
}

type workerRow struct {
	ID       string
	State    string
	LastSeen instant
	Started  instant
	Queues   []string
	Labels   []string // "key=value"
	Held     []string // job ids, at most maxHeldShown
	MoreHeld int
}

// maxHeldShown bounds the job links of one worker row.
const maxHeldShown = 8

// stateRank orders workers: suspect ones (about to lose their jobs) first,
// then the live, then the dead.
var stateRank = map[store.WorkerState]int{store.WorkerSuspect: 0, store.WorkerLive: 1, store.WorkerDead: 2}

func (d *dash) workersPanel(rq *request) (templ.Component, error) {
	workers, err := d.store.WorkerList(rq.ctx, &store.WorkerListParams{})
	if err != nil {
		return nil, err
	}
	m := workersPanel{Heading: rq.heading("Workers"), Base: rq.base, DeadAfter: span(d.cfg.DeadAfter), HeartbeatDue: span(d.cfg.HeartbeatInterval)}
	states := map[*store.Worker]store.WorkerState{}
	for _, w := range workers {
		states[w] = d.workerState(w.LastHeartbeatAt, rq.now)
	}
	// By liveness, then the most recently heard from first.
	slices.SortStableFunc(workers, func(a, b *store.Worker) int {
		return cmp.Or(cmp.Compare(stateRank[states[a]], stateRank[states[b]]),
			b.LastHeartbeatAt.Compare(a.LastHeartbeatAt), cmp.Compare(a.ID, b.ID))
	})
	for _, w := range workers {
		st := states[w]
		switch st {
		case store.WorkerLive:
			m.Live++
		case store.WorkerSuspect:
			m.Suspect++
		default:
			m.Dead++
		}
		row := workerRow{ID: w.ID, State: string(st), LastSeen: instantAt(w.LastHeartbeatAt, rq.now),
			Started: instantAt(w.StartedAt, rq.now), Queues: w.Queues}
		for _, k := range slices.Sorted(maps.Keys(w.Labels)) {
			row.Labels = append(row.Labels, k+"="+w.Labels[k])
		}
		row.Held = w.InFlight[:min(len(w.InFlight), maxHeldShown)]
		row.MoreHeld = len(w.InFlight) - len(row.Held)
		m.Workers = append(m.Workers, row)
	}
	return workersView(m), nil
}
