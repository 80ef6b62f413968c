package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tetherq/tether/store"
)

// The bulk forms: /jobs/bulk, /retries/retry, /dead/retry, and the
// confirmation of /jobs/{id}/delete. Each reads its form, refuses bad input
// before any store call, and names its set of jobs for bulk.

// bulkJobs acts on the jobs selected on /jobs (id fields), or with all=1
// on every job matching the filter fields queue, state and kind that the
// action applies to: retry (dead, cancelled), cancel (scheduled, available,
// running) or delete (any but running).
func (d *dash) bulkJobs(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm() // a malformed body reads as no fields
	name := r.PostFormValue("action")
	op, ok := bulkOps[name]
	if !ok {
		d.refuse(w, r, &badInput{msg: fmt.Sprintf("action %q must be one of retry, cancel, delete", name)})
		return
	}
	s := jobSearch{Queue: r.PostFormValue("queue"), State: r.PostFormValue("state"), Kind: r.PostFormValue("kind")}
	ids, err := selected(r)
	all := r.PostFormValue("all") != ""
	if all {
		err = firstBad(s.check(), err)
	}
	if err != nil {
		d.refuse(w, r, err)
		return
	}
	set := bulkSet{ids: ids, what: "the jobs selected", fields: url.Values{"action": {name}}}
	if all {
		if set, err = d.jobsMatching(r.Context(), s, op); err != nil {
			d.done(w, r, "/jobs", err, "", "the jobs")
			return
		}
		set.fields.Set("action", name)
	}
	d.bulk(w, r, op, set, "/jobs/bulk", "/jobs", defaultBulkLimits)
}

// jobsMatching is every job the search s finds in a state op changes.
func (d *dash) jobsMatching(ctx context.Context, s jobSearch, op bulkOp) (bulkSet, error) {
	var states []store.State
	for _, st := range op.states {
		if s.State == "" || string(st) == s.State {
			states = append(states, st)
		}
	}
	set := bulkSet{all: true, counted: -1, what: describeJobs(s.Queue, s.Kind, states),
		fields: url.Values{"all": {"1"}, "queue": {s.Queue}, "state": {s.State}, "kind": {s.Kind}}}
	if s.Kind == "" {
		queues, err := d.store.QueueList(ctx, &store.QueueListParams{Now: d.now()})
		if err != nil {
			return set, err
		}
		set.counted = 0
		for _, st := range states {
			set.counted += countJobs(queues, s.Queue, st)
		}
	}
	set.list = func(ctx context.Context, lists int, fn func(string) bool) (bool, error) {
		calls := 0
		for _, st := range states {
			more, err := eachPage(ctx, &calls, lists, fn, func(cursor string) ([]*store.Job, string, error) {
				return d.searchPage(ctx, s.Queue, s.Kind, st, cursor)
			})
			if more || err != nil {
				return more, err
			}
		}
		return false, nil
	}
	return set, nil
}

// searchPage is one page of bulkBatch jobs of the search, by Insights when
// the backend has them, else by JobList.
func (d *dash) searchPage(ctx context.Context, queue, kind string, state store.State, cursor string) ([]*store.Job, string, error) {
	if d.ins != nil {
		page, err := d.ins.JobSearch(ctx, &store.JobSearchParams{Queue: queue, Kind: kind, State: state, Limit: bulkBatch,
			Cursor: cursor, MaxBytes: store.DefaultPageBytes})
		if err != nil {
			return nil, "", err
		}
		return page.Jobs, page.NextCursor, nil
	}
	jobs, err := d.store.JobList(ctx, &store.JobListParams{Queue: queue, Kind: kind, State: state, Limit: bulkBatch,
		Cursor: cursor, MaxBytes: store.DefaultPageBytes, Now: d.now()})
	if err != nil || len(jobs) == 0 {
		return nil, "", err
	}
	next := ""
	if len(jobs) == bulkBatch || store.PageFull(jobs, store.DefaultPageBytes) {
		next = jobs[len(jobs)-1].ID
	}
	return jobs, next, nil
}

// eachPage calls fn with each job of a paged list, counting its list calls
// in calls, at most lists of them in all; it reports whether it stopped
// before the list's end.
func eachPage(ctx context.Context, calls *int, lists int, fn func(string) bool,
	page func(cursor string) ([]*store.Job, string, error)) (bool, error) {
	cursor := ""
	for {
		if *calls >= lists {
			return true, nil
		}
		*calls++
		jobs, next, err := page(cursor)
		if err != nil {
			return false, err
		}
		for _, j := range jobs {
			if !fn(j.ID) {
				return true, nil
			}
		}
		if next == "" {
			return false, ctx.Err()
		}
		cursor = next
	}
}

// describeJobs words a bulk set: "dead or cancelled jobs in queue emails of
// kind send".
func describeJobs(queue, kind string, states []store.State) string {
	var b strings.Builder
	if len(states) > 0 && len(states) < len(store.States)-1 {
		b.WriteString(stateList(states) + " ")
	}
	b.WriteString("jobs")
	if queue != "" {
		b.WriteString(" in queue " + queue)
	} else {
		b.WriteString(" in every queue")
	}
	if kind != "" {
		b.WriteString(" of kind " + kind)
	}
	return b.String()
}

// retryRetrying retries at once, without waiting out their backoff, the
// retrying jobs selected on /retries (id fields), or with all=1 every
// retrying job of the queue field's queue (every queue without one).
func (d *dash) retryRetrying(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	queue := r.PostFormValue("queue")
	ids, err := selected(r)
	all := r.PostFormValue("all") != ""
	if all {
		err = firstBad(checkName("queue", queue, true), err)
	}
	if err != nil {
		d.refuse(w, r, err)
		return
	}
	set := bulkSet{ids: ids, what: "the retrying jobs selected"}
	if all {
		set = bulkSet{all: true, what: strings.Replace(describeJobs(queue, "", nil), "jobs", "retrying jobs", 1),
			fields: url.Values{"all": {"1"}, "queue": {queue}}}
		queues, err := d.store.QueueList(r.Context(), &store.QueueListParams{Now: d.now()})
		if err != nil {
			d.done(w, r, "/retries", err, "", "the retrying jobs")
			return
		}
		for _, q := range queues {
			if queue == "" || q.Name == queue {
				set.counted += q.Retrying
			}
		}
		set.list = func(ctx context.Context, lists int, fn func(string) bool) (bool, error) {
			if d.ins == nil {
				return false, errNoInsights
			}
			calls := 0
			return eachPage(ctx, &calls, lists, fn, func(cursor string) ([]*store.Job, string, error) {
				page, err := d.ins.JobListRetrying(ctx, &store.JobListRetryingParams{Queue: queue, Limit: bulkBatch,
					Cursor: cursor, MaxBytes: store.DefaultPageBytes})
				if err != nil {
					return nil, "", err
				}
				return page.Jobs, page.NextCursor, nil
			})
		}
	}
	d.bulk(w, r, opRunNow, set, "/retries/retry", "/retries", defaultBulkLimits)
}

// retryDead retries the dead jobs selected (id fields), or with all=1 every
// dead job matching the filter (queue, kind, reason fields), one JobRetry
// each, as the API would.
func (d *dash) retryDead(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f := deadFilterOf(r.PostFormValue)
	ids, err := selected(r)
	all := r.PostFormValue("all") != ""
	if all {
		err = firstBad(f.check(), err)
	}
	if err != nil {
		d.refuse(w, r, err)
		return
	}
	set := bulkSet{ids: ids, what: "the dead jobs selected"}
	if all {
		what := describeJobs(f.Queue, f.Kind, []store.State{store.StateDead})
		if f.Reason != "" {
			what += " that died of " + f.Reason
		}
		set = bulkSet{all: true, counted: -1, what: what,
			fields: url.Values{"all": {"1"}, "queue": {f.Queue}, "kind": {f.Kind}, "reason": {f.Reason}}}
		if f.Kind == "" && f.Reason == "" {
			queues, err := d.store.QueueList(r.Context(), &store.QueueListParams{Now: d.now()})
			if err != nil {
				d.done(w, r, "/dead", err, "", "the dead jobs")
				return
			}
			set.counted = countJobs(queues, f.Queue, store.StateDead)
		}
		set.list = func(ctx context.Context, lists int, fn func(string) bool) (bool, error) {
			if d.ins == nil {
				return false, errNoInsights
			}
			calls := 0
			return eachPage(ctx, &calls, lists, fn, func(cursor string) ([]*store.Job, string, error) {
				page, err := d.ins.JobListDead(ctx, &store.JobListDeadParams{Queue: f.Queue, Kind: f.Kind,
					Reason: store.DeadReason(f.Reason), Limit: bulkBatch, Cursor: cursor, MaxBytes: store.DefaultPageBytes})
				if err != nil {
					return nil, "", err
				}
				return page.Jobs, page.NextCursor, nil
			})
		}
	}
	d.bulk(w, r, opRetry, set, "/dead/retry", "/dead", defaultBulkLimits)
}

// confirmDelete answers a delete of one job that its form has not
// confirmed: the confirmation, or why it cannot be deleted. It reports
// whether it answered.
func (d *dash) confirmDelete(w http.ResponseWriter, r *http.Request, id, back string) bool {
	if r.PostFormValue("confirm") == "yes" {
		return false
	}
	j, err := d.store.JobGet(r.Context(), &store.JobGetParams{ID: id, Now: d.now()})
	if err == nil && !slices.Contains(opDelete.states, j.State) {
		err = fmt.Errorf("delete a %s job: %w", j.State, store.ErrInvalidState)
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && strings.HasPrefix(back, jobPath(id)) {
			back = "/jobs" // the job's own page is gone
		}
		if !isUserError(err) {
			d.log.Error("dashboard action failed", "path", r.URL.Path, "err", err)
		}
		setFlash(w, result(err, "", "job "+shortID(id)))
		http.Redirect(w, r, back, http.StatusSeeOther)
		return true
	}
	d.confirmBulk(w, r, opDelete, bulkSet{ids: []string{id}, what: "job " + shortID(id) + " (" + stateLabel(j, d.now()) +
		", queue " + j.Queue + "), with its attempts"}, jobPath(id)+"/delete", back, defaultBulkLimits)
	return true
}
