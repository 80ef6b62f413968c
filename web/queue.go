package web

import (
	"net/url"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// queuePanel is one queue: its counts by state, whether it is paused, how
// long its oldest job has waited, its limits with the leases they held
// back, and the form that sets them.
type queuePanel struct {
	Row  queueRow
	Back string
	Base string
}

// queueJobsPanel is a queue's most recent jobs, newest first.
type queueJobsPanel struct {
	Queue string
	Jobs  []jobRow
	Total int64
}

// queueJobsShown bounds the recent jobs of a queue page; the job list has
// the rest.
const queueJobsShown = 20

// queueOf returns the queue the page names, errNotFound when no queue of
// that name has jobs or was paused, or a bad input for a name no queue can
// have.
func (d *dash) queueOf(rq *request) (*store.Queue, error) {
	name := param(rq.r, "name")
	if err := checkName("queue", name, false); err != nil {
		return nil, err
	}
	queues, err := d.queues(rq)
	if err != nil {
		return nil, err
	}
	for _, q := range queues {
		if q.Name == name {
			return q, nil
		}
	}
	return nil, errNotFound
}

func (d *dash) queuePanel(rq *request) (templ.Component, error) {
	q, err := d.queueOf(rq)
	if err != nil {
		return nil, err
	}
	return queueView(queuePanel{Row: newQueueRow(q, rq), Back: rq.back, Base: rq.base}), nil
}

func (d *dash) queueJobsPanel(rq *request) (templ.Component, error) {
	q, err := d.queueOf(rq)
	if err != nil {
		return nil, err
	}
	jobs, err := d.store.JobList(rq.ctx, &store.JobListParams{Queue: q.Name, Limit: queueJobsShown,
		MaxBytes: store.DefaultPageBytes, Now: rq.now})
	if err != nil {
		return nil, err
	}
	m := queueJobsPanel{Queue: q.Name, Total: countJobs([]*store.Queue{q}, q.Name, "")}
	for _, j := range jobs {
		m.Jobs = append(m.Jobs, jobRow{ID: j.ID, Queue: j.Queue, Kind: j.Kind, State: stateLabel(j, rq.now),
			Attempt: j.Attempt, Max: j.MaxAttempts, Created: instantAt(j.CreatedAt, rq.now)})
	}
	return queueJobsView(m), nil
}

// queueHref is a queue's own page.
func queueHref(name string) string { return "/queues/" + url.PathEscape(name) }
