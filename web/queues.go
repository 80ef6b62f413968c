package web

import (
	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// queuesPanel is the table of queues with their counts by state, their
// limits, and the pause, resume and limits forms.
type queuesPanel struct {
	Heading string
	Queues  []queueRow
	Back    string
	Base    string
}

type queueRow struct {
	Name   string
	Paused bool
	// Counts follow store.States; Retrying is the part of scheduled that
	// waits out a backoff.
	Counts   []stateCount
	Retrying int64
	Total    int64
	// OldestWaiting is how long the oldest available job has waited.
	OldestWaiting string
	// Limits words the queue's limits ("" none), Throttled the leases
	// they held back; Form fills the edit form.
	Limits    string
	Throttled string
	Form      limitsForm
}

type stateCount struct {
	State string
	N     int64
	Width string // share of the queue's jobs, as a CSS width
}

func (d *dash) queuesPanel(rq *request) (templ.Component, error) {
	queues, err := d.queues(rq)
	if err != nil {
		return nil, err
	}
	m := queuesPanel{Heading: rq.heading("Queues"), Back: rq.back, Base: rq.base}
	for _, q := range queues {
		m.Queues = append(m.Queues, newQueueRow(q, rq))
	}
	return queuesView(m), nil
}

func newQueueRow(q *store.Queue, rq *request) queueRow {
	row := queueRow{Name: q.Name, Paused: q.Paused, Retrying: q.Retrying, OldestWaiting: "—",
		Limits: limitsSummary(q.Limits), Throttled: throttledSummary(q.Throttled), Form: newLimitsForm(q.Limits)}
	for _, st := range store.States {
		row.Total += q.Counts[st]
	}
	for _, st := range store.States {
		row.Counts = append(row.Counts, stateCount{State: string(st), N: q.Counts[st], Width: percent(q.Counts[st], row.Total)})
	}
	if q.OldestAvailableAt != nil {
		row.OldestWaiting = span(max(0, rq.now.Sub(*q.OldestAvailableAt)))
	}
	return row
}
