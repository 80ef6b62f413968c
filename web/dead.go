package web

import (
	"net/url"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// deadPanel lists dead jobs matching the filter, most recently dead first,
// with per-row retry and delete and the bulk retry form.
type deadPanel struct {
	Heading string
	Filter  deadFilter
	Jobs    []deadRow
	// Total counts the dead jobs of the filter's queue (or all queues) from
	// the maintained counts; the kind and reason filters are not counted.
	Total int64
	Pages pages
	Back  string
}

type deadRow struct {
	JobID, Queue, Kind string
	Reason             string
	LastError          string
	Died               instant
	Attempt, Max       int
	Rescues            int
}

// deadFilter is the dead list's filter, from the query or the bulk form.
type deadFilter struct {
	Queue, Kind, Reason string
	Queues              []string
}

func deadFilterOf(get func(string) string) deadFilter {
	return deadFilter{Queue: get("queue"), Kind: get("kind"), Reason: get("reason")}
}

// deadReasons are the values of the reason filter.
var deadReasons = []store.DeadReason{store.DeadAttemptsExhausted, store.DeadCrashLoop,
	store.DeadFailedPermanently, store.DeadTimeoutExhausted}

func (d *dash) deadPanel(rq *request) (templ.Component, error) {
	if d.ins == nil {
		return nil, errNoInsights
	}
	f := deadFilterOf(rq.query)
	if err := f.check(); err != nil {
		return nil, err
	}
	page, err := d.ins.JobListDead(rq.ctx, &store.JobListDeadParams{Queue: f.Queue, Kind: f.Kind,
		Reason: store.DeadReason(f.Reason), Cursor: rq.query("cursor"), MaxBytes: store.DefaultPageBytes})
	if err != nil {
		return nil, err
	}
	queues, err := d.queues(rq)
	if err != nil {
		return nil, err
	}
	m := deadPanel{Heading: rq.heading("Dead jobs"), Filter: f, Back: rq.back}
	for _, q := range queues {
		if f.Queue == "" || q.Name == f.Queue {
			m.Total += q.Counts[store.StateDead]
		}
	}
	for _, j := range page.Jobs {
		row := deadRow{JobID: j.ID, Queue: j.Queue, Kind: j.Kind, Died: instantOf(j.FinishedAt, rq.now),
			Attempt: j.Attempt, Max: j.MaxAttempts, Rescues: j.Rescues}
		if j.DeadReason != nil {
			row.Reason = string(*j.DeadReason)
		}
		if j.LastError != nil {
			row.LastError = *j.LastError
		}
		m.Jobs = append(m.Jobs, row)
	}
	m.Pages = trailOf(rq).links("/dead", url.Values{"queue": {f.Queue}, "kind": {f.Kind}, "reason": {f.Reason}}, page.NextCursor)
	return deadView(m), nil
}

func (d *dash) deadHead(rq *request) templ.Component {
	f := deadFilterOf(rq.query)
	if qs, err := d.queues(rq); err == nil {
		for _, q := range qs {
			f.Queues = append(f.Queues, q.Name)
		}
	}
	return deadFilterView(f)
}

// check refuses a filter with a bad name or an unknown reason.
func (f deadFilter) check() error {
	return firstBad(checkName("queue", f.Queue, true), checkName("kind", f.Kind, true), checkReason(f.Reason))
}

// filtered reports whether the filter narrows the list.
func (f deadFilter) filtered() bool { return f.Queue != "" || f.Kind != "" || f.Reason != "" }
