package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// Bulk actions. An action that touches more than one job, and every
// delete, first answers with a page that names how many jobs it will change
// (confirmView); that page's form repeats the request with confirm=yes, and
// only that POST acts. Acting lists the matching jobs in batches of
// bulkBatch and changes each with the same store call as its API route, at
// most limits.jobs of them and for at most bulkBudget per request, so one
// click stays short however many jobs match; the flash says when more
// remain.

// Bounds of one bulk request.
const (
	// maxBulk is the most jobs one confirmed request changes.
	maxBulk = 10_000
	// maxBulkLists bounds the list calls one request makes (to count or to
	// act): a filter no index serves, a rare kind among millions of jobs,
	// is looked for a window at a time, never in one full scan.
	maxBulkLists = 100
	// bulkBatch is the page size of those list calls.
	bulkBatch = 500
	// maxSelected is the most job ids one form may name.
	maxSelected = store.MaxBatch
	// bulkBudget bounds the time one request spends acting, well inside
	// the server's write timeout.
	bulkBudget = 10 * time.Second
)

// bulkLimits are a request's bounds; tests shrink them.
type bulkLimits struct{ jobs, lists int }

var defaultBulkLimits = bulkLimits{jobs: maxBulk, lists: maxBulkLists}

// bulkOp is what a bulk action does to each job.
type bulkOp struct {
	verb   string        // the button: "Retry"
	done   string        // the flash: "Retried"
	states []store.State // the states it changes; the store refuses the rest
	style  string        // the confirming button's class
	apply  func(d *dash, ctx context.Context, id string) error
}

var (
	opRetry = bulkOp{verb: "Retry", done: "Retried", states: []store.State{store.StateDead, store.StateCancelled},
		style: "btn-primary", apply: func(d *dash, ctx context.Context, id string) error {
			_, err := d.store.JobRetry(ctx, &store.JobRetryParams{ID: id, Now: d.now()})
			return err
		}}
	opCancel = bulkOp{verb: "Cancel", done: "Cancelled (or asked to cancel, if running)",
		states: []store.State{store.StateScheduled, store.StateAvailable, store.StateRunning},
		apply: func(d *dash, ctx context.Context, id string) error {
			_, err := d.store.JobCancel(ctx, &store.JobCancelParams{ID: id, Now: d.now()})
			return err
		}}
	opDelete = bulkOp{verb: "Delete", done: "Deleted", style: "btn-danger",
		states: []store.State{store.StateScheduled, store.StateAvailable, store.StateSucceeded, store.StateDead, store.StateCancelled},
		apply: func(d *dash, ctx context.Context, id string) error {
			return d.store.JobDelete(ctx, &store.JobDeleteParams{ID: id})
		}}
	// opRunNow retries a retrying job at once instead of after its backoff.
	opRunNow = bulkOp{verb: "Retry now", done: "Made available now", states: []store.State{store.StateScheduled},
		style: "btn-primary", apply: func(d *dash, ctx context.Context, id string) error {
			_, err := d.store.JobRun(ctx, &store.JobRunParams{ID: id, Now: d.now()})
			return err
		}}
)

// bulkOps are the actions of /jobs/bulk, by their form value.
var bulkOps = map[string]bulkOp{"retry": opRetry, "cancel": opCancel, "delete": opDelete}

// bulkSet is the jobs a bulk form names: the ids selected, or with all
// every job a list finds.
type bulkSet struct {
	ids []string
	all bool
	// list calls fn with each job of the set, a batch at a time, until fn
	// returns false or the list ends, in at most lists list calls; it
	// reports whether it stopped before the end.
	list func(ctx context.Context, lists int, fn func(id string) bool) (more bool, err error)
	// counted is how many jobs the list holds when the maintained counts
	// say it exactly; -1 when they cannot (a kind or reason filter).
	counted int64
	// what names the jobs: "dead jobs in queue emails".
	what string
	// fields are the form's fields that name the set, for the confirmation
	// to send again.
	fields url.Values
}

// selected reads the ids a form names, each once. More than maxSelected
// is bad input: "all matching" is the way to name that many.
func selected(r *http.Request) ([]string, error) {
	var ids []string
	for _, id := range r.PostForm["id"] {
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > maxSelected {
		return nil, &badInput{msg: fmt.Sprintf("%s jobs are selected, at most %s may be: act on all matching instead",
			number(int64(len(ids))), number(maxSelected))}
	}
	return ids, nil
}

// bulk runs op on set: it asks first when the set may hold more than one
// job or op deletes, and acts when the form confirms. action is the form's
// own path; def where to go back when the form names no page.
func (d *dash) bulk(w http.ResponseWriter, r *http.Request, op bulkOp, set bulkSet, action, def string, lim bulkLimits) {
	back := safeBack(r.PostFormValue("back"), def)
	if !set.all && len(set.ids) == 0 {
		setFlash(w, flash{Message: "Nothing done: no job was selected. Tick the boxes of the jobs first, or act on all matching."})
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	if r.PostFormValue("confirm") != "yes" && (set.all || len(set.ids) > 1 || op.verb == opDelete.verb) {
		d.confirmBulk(w, r, op, set, action, back, lim)
		return
	}
	acted, failed, more, err := d.actBulk(r.Context(), op, set, lim)
	if err != nil && !isUserError(err) {
		d.log.Error("dashboard bulk action failed", "path", r.URL.Path, "err", err)
	}
	msg := fmt.Sprintf("%s %s job%s.", op.done, number(int64(acted)), plural(acted))
	if failed > 0 {
		msg += fmt.Sprintf(" %s could not be changed (gone, or in a state that does not allow it).", number(int64(failed)))
	}
	if more {
		msg += " Stopped there to keep the request short: do it again for the rest."
	}
	f := flash{OK: err == nil, Message: msg}
	if err != nil {
		f.Message = msg + " Then it failed: " + err.Error()
	}
	setFlash(w, f)
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// actBulk applies op to each job of set, at most lim.jobs of them and for
// at most bulkBudget. A job the store refuses (gone, or in a state that
// does not allow op) counts as failed; any other error ends the run.
func (d *dash) actBulk(ctx context.Context, op bulkOp, set bulkSet, lim bulkLimits) (acted, failed int, more bool, err error) {
	budget, cancel := context.WithTimeout(ctx, bulkBudget)
	defer cancel()
	each := func(id string) bool {
		if acted+failed == lim.jobs || budget.Err() != nil {
			more = true
			return false
		}
		switch e := op.apply(d, ctx, id); {
		case e == nil:
			acted++
		case isUserError(e):
			failed++
		default:
			err = e
			return false
		}
		return true
	}
	if !set.all {
		for _, id := range set.ids {
			if !each(id) {
				break
			}
		}
		return acted, failed, more, err
	}
	stopped, lerr := set.list(ctx, lim.lists, each)
	return acted, failed, more || (stopped && err == nil), errors.Join(err, lerr)
}

// countBulk says how many jobs set holds: exactly, or at least n when
// counting stopped at lim.
func (d *dash) countBulk(ctx context.Context, set bulkSet, lim bulkLimits) (n int64, exact bool, err error) {
	switch {
	case !set.all:
		return int64(len(set.ids)), true, nil
	case set.counted >= 0:
		return set.counted, true, nil
	}
	more, err := set.list(ctx, lim.lists, func(string) bool {
		n++
		return n <= int64(lim.jobs)
	})
	return n, !more, err
}

// confirmBulk answers with the page that names how many jobs op will
// change, or, when none can, says so and goes back.
func (d *dash) confirmBulk(w http.ResponseWriter, r *http.Request, op bulkOp, set bulkSet, action, back string, lim bulkLimits) {
	n, exact, err := d.countBulk(r.Context(), set, lim)
	if err != nil {
		d.done(w, r, back, err, "", "the jobs")
		return
	}
	if n == 0 {
		msg := "Nothing done: no job matches (" + set.what + ")."
		if !exact {
			msg = "Nothing done: no job matches (" + set.what + ") among the many looked at; narrow the filter by queue or state."
		}
		setFlash(w, flash{Message: msg})
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	c := confirm{Action: action, Back: back, Style: op.style, Count: number(n), Jobs: "job" + plural(int(min(n, 2))),
		Verb: op.verb, What: set.what, Fields: []formField{{"back", back}}}
	switch {
	case !exact && n > int64(lim.jobs):
		c.Count = "more than " + number(int64(lim.jobs))
	case !exact:
		c.Count = "at least " + number(n)
		c.Note = "Counting stopped after looking at part of the list; this click changes every match it finds, up to " +
			number(int64(lim.jobs)) + "."
	}
	if n > int64(lim.jobs) {
		c.Note = "This click changes the first " + number(int64(lim.jobs)) + " of them: do it again for the rest."
	}
	if !set.all {
		if len(set.ids) > 1 {
			c.Note = "Only those that are " + stateList(op.states) + " change; the others are left as they are."
		}
		c.More = max(0, len(set.ids)-maxSampleIDs)
		for i, id := range set.ids {
			if i < maxSampleIDs {
				c.Sample = append(c.Sample, id)
			}
			c.Fields = append(c.Fields, formField{"id", id})
		}
	}
	for k, vs := range set.fields {
		for _, v := range vs {
			c.Fields = append(c.Fields, formField{k, v})
		}
	}
	slices.SortStableFunc(c.Fields, func(a, b formField) int { return strings.Compare(a.Name, b.Name) })
	rq := d.newRequest(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	d.render(rq, w, layoutView(layout{Title: c.Verb + " " + c.Count + " " + c.Jobs + "?", NowMS: rq.now.UnixMilli(),
		NodeID: d.cfg.NodeID, Version: d.cfg.Version, Panels: []templ.Component{confirmView(c)}}))
}

// maxSampleIDs bounds the selected ids a confirmation lists.
const maxSampleIDs = 12

// confirm is a bulk action's confirmation: how many jobs, which, and the
// form that acts.
type confirm struct {
	Verb, Count, Jobs string
	What              string
	Note              string
	Sample            []string
	More              int // selected ids not in Sample
	Action, Back      string
	Style             string
	Fields            []formField
}

type formField struct{ Name, Value string }

// stateList words states as "dead or cancelled".
func stateList(states []store.State) string {
	s := ""
	for i, st := range states {
		switch {
		case i == 0:
		case i == len(states)-1:
			s += " or "
		default:
			s += ", "
		}
		s += string(st)
	}
	return s
}
