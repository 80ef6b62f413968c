package web

import (
	"net/url"
	"strings"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// jobsPanel is one page of the job search, newest first.
type jobsPanel struct {
	Heading string
	Search  jobSearch
	Jobs    []jobRow
	Pages   pages
	// Total counts the jobs the queue and state filters select, from the
	// maintained counts; -1 when a kind or id filter narrows them further
	// (those are not counted), Of then the count they narrow.
	Total, Of int64
	Back      string
	Base      string
	Limited   bool // the backend cannot search by id prefix
}

// jobSearch is the search form's values.
type jobSearch struct {
	Queue, State, Kind, Q string
	Queues                []string
}

func (s jobSearch) any() bool { return s.Queue != "" || s.State != "" || s.Kind != "" || s.Q != "" }

type jobRow struct {
	ID, Queue, Kind, State string
	Attempt, Max           int
	Created                instant
	Actions                []jobAction
}

// jobAction is one button of a job: what its state allows.
type jobAction struct {
	Verb, Label, Style string
}

// jobActions lists what a job in state allows, as API.md's admin routes do.
func jobActions(j *store.Job, state store.State) []jobAction {
	switch state {
	case store.StateScheduled:
		return []jobAction{{"run", "Run now", "btn-primary"}, {"cancel", "Cancel", ""}}
	case store.StateAvailable:
		return []jobAction{{"cancel", "Cancel", ""}}
	case store.StateRunning:
		if j.CancelRequested {
			return nil
		}
		return []jobAction{{"cancel", "Request cancel", ""}}
	case store.StateDead, store.StateCancelled:
		return []jobAction{{"retry", "Retry", "btn-primary"}, {"delete", "Delete", "btn-danger"}}
	default:
		return []jobAction{{"delete", "Delete", "btn-danger"}}
	}
}

func searchOf(rq *request) jobSearch {
	return jobSearch{Queue: rq.query("queue"), State: rq.query("state"), Kind: rq.query("kind"),
		Q: strings.TrimSpace(rq.query("q"))}
}

// check refuses a search the API would: bad names or state.
func (s jobSearch) check() error {
	return firstBad(checkName("queue", s.Queue, true), checkName("kind", s.Kind, true), checkState(s.State))
}

func (d *dash) jobsPanel(rq *request) (templ.Component, error) {
	s := searchOf(rq)
	if err := s.check(); err != nil {
		return nil, err
	}
	m := jobsPanel{Heading: rq.heading("Jobs"), Search: s, Back: rq.back, Base: rq.base}
	state := store.State(s.State)
	t := trailOf(rq)
	cursor := t.cursor
	var jobs []*store.Job
	var next string
	if d.ins != nil {
		page, err := d.ins.JobSearch(rq.ctx, &store.JobSearchParams{IDPrefix: s.Q, Queue: s.Queue, Kind: s.Kind,
			State: state, Cursor: cursor, MaxBytes: store.DefaultPageBytes})
		if err != nil {
			return nil, err
		}
		jobs, next = page.Jobs, page.NextCursor
	} else {
		const limit = 50
		list, err := d.store.JobList(rq.ctx, &store.JobListParams{Queue: s.Queue, State: state, Kind: s.Kind,
			Limit: limit, Cursor: cursor, MaxBytes: store.DefaultPageBytes, Now: rq.now})
		if err != nil {
			return nil, err
		}
		jobs, m.Limited = list, s.Q != ""
		if len(list) == limit || store.PageFull(list, store.DefaultPageBytes) {
			next = list[len(list)-1].ID
		}
	}
	for _, j := range jobs {
		st := j.StateAt(rq.now)
		m.Jobs = append(m.Jobs, jobRow{ID: j.ID, Queue: j.Queue, Kind: j.Kind, State: stateLabel(j, rq.now), Attempt: j.Attempt,
			Max: j.MaxAttempts, Created: instantAt(j.CreatedAt, rq.now), Actions: jobActions(j, st)})
	}
	m.Pages = t.links("/jobs", url.Values{"queue": {s.Queue}, "state": {s.State}, "kind": {s.Kind}, "q": {s.Q}}, next)
	queues, err := d.queues(rq)
	if err != nil {
		return nil, err
	}
	m.Total = countJobs(queues, s.Queue, state)
	if s.Kind != "" || s.Q != "" {
		m.Total, m.Of = -1, m.Total
	}
	return jobsView(m), nil
}

// countJobs sums the maintained counts of queue (or every queue) in state
// (or every state).
func countJobs(queues []*store.Queue, queue string, state store.State) int64 {
	var n int64
	for _, q := range queues {
		if queue != "" && q.Name != queue {
			continue
		}
		for _, st := range store.States {
			if state == "" || st == state {
				n += q.Counts[st]
			}
		}
	}
	return n
}

func (d *dash) jobsHead(rq *request) templ.Component {
	s := searchOf(rq)
	if qs, err := d.queues(rq); err == nil {
		for _, q := range qs {
			s.Queues = append(s.Queues, q.Name)
		}
	}
	return jobSearchView(s)
}

func allStates() []string {
	out := make([]string, len(store.States))
	for i, s := range store.States {
		out[i] = string(s)
	}
	return out
}
