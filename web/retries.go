package web

import (
	"net/url"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// retriesPanel lists the scheduled jobs that wait out a retry backoff,
// soonest first, with their last error and "run now" and "cancel".
type retriesPanel struct {
	Heading string
	Queue   string
	Jobs    []retryRow
	Pages   pages
	// Total counts the retrying jobs of the queue (or every queue), from
	// the maintained counts.
	Total int64
	Back  string
}

type retryRow struct {
	JobID, Queue, Kind string
	Attempt, Max       int
	NextRun            instant
	LastError          string
}

func (d *dash) retriesPanel(rq *request) (templ.Component, error) {
	if d.ins == nil {
		return nil, errNoInsights
	}
	queue := rq.query("queue")
	if err := checkName("queue", queue, true); err != nil {
		return nil, err
	}
	page, err := d.ins.JobListRetrying(rq.ctx, &store.JobListRetryingParams{Queue: queue, Cursor: rq.query("cursor"),
		MaxBytes: store.DefaultPageBytes})
	if err != nil {
		return nil, err
	}
	queues, err := d.queues(rq)
	if err != nil {
		return nil, err
	}
	m := retriesPanel{Heading: rq.heading("Retrying"), Queue: queue, Back: rq.back}
	for _, q := range queues {
		if queue == "" || q.Name == queue {
			m.Total += q.Retrying
		}
	}
	for _, j := range page.Jobs {
		row := retryRow{JobID: j.ID, Queue: j.Queue, Kind: j.Kind, Attempt: j.Attempt, Max: j.MaxAttempts,
			NextRun: instantAt(j.RunAt, rq.now)}
		if j.LastError != nil {
			row.LastError = *j.LastError
		}
		m.Jobs = append(m.Jobs, row)
	}
	m.Pages = trailOf(rq).links("/retries", url.Values{"queue": {queue}}, page.NextCursor)
	return retriesView(m), nil
}

// queueFilter is the static form above a list filtered by queue.
type queueFilter struct {
	Action string
	Queue  string
	Queues []string
}

func (d *dash) queueFilterHead(action string) func(rq *request) templ.Component {
	return func(rq *request) templ.Component {
		f := queueFilter{Action: action, Queue: rq.query("queue")}
		if qs, err := d.queues(rq); err == nil {
			for _, q := range qs {
				f.Queues = append(f.Queues, q.Name)
			}
		}
		return queueFilterView(f)
	}
}
