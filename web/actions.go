package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/tetherq/tether/store"
)

// Actions are form POSTs. Each makes the same store call as its API route,
// sets a flash with the result and answers 303 to the page the form came
// from (its "back" field), so the browser's back button and reloads never
// repeat it.

func (d *dash) pauseQueue(w http.ResponseWriter, r *http.Request)  { d.setPaused(w, r, true) }
func (d *dash) resumeQueue(w http.ResponseWriter, r *http.Request) { d.setPaused(w, r, false) }

func (d *dash) setPaused(w http.ResponseWriter, r *http.Request, paused bool) {
	name := param(r, "name")
	if err := checkName("queue", name, false); err != nil {
		d.refuse(w, r, err)
		return
	}
	_, err := d.store.QueueSetPaused(r.Context(), &store.QueueSetPausedParams{Name: name, Paused: paused, Now: d.now()})
	verb := "Resumed"
	if paused {
		verb = "Paused"
	}
	d.done(w, r, "/queues", err, fmt.Sprintf("%s queue %s.", verb, name), "queue "+name)
}

func (d *dash) retryJob(w http.ResponseWriter, r *http.Request) {
	id := param(r, "id")
	j, err := d.store.JobRetry(r.Context(), &store.JobRetryParams{ID: id, Now: d.now()})
	msg := ""
	if err == nil {
		msg = fmt.Sprintf("Job %s is back in queue %s.", shortID(id), j.Queue)
	}
	d.done(w, r, jobPath(id), err, msg, "job "+shortID(id))
}

func (d *dash) runJob(w http.ResponseWriter, r *http.Request) {
	id := param(r, "id")
	_, err := d.store.JobRun(r.Context(), &store.JobRunParams{ID: id, Now: d.now()})
	d.done(w, r, jobPath(id), err, fmt.Sprintf("Job %s is available now.", shortID(id)), "job "+shortID(id))
}

func (d *dash) cancelJob(w http.ResponseWriter, r *http.Request) {
	id := param(r, "id")
	j, err := d.store.JobCancel(r.Context(), &store.JobCancelParams{ID: id, Now: d.now()})
	msg := fmt.Sprintf("Job %s is cancelled.", shortID(id))
	if err == nil && j.State == store.StateRunning {
		msg = fmt.Sprintf("Cancellation of job %s requested: its worker learns of it at its next heartbeat or extend.", shortID(id))
	}
	d.done(w, r, jobPath(id), err, msg, "job "+shortID(id))
}

func (d *dash) deleteJob(w http.ResponseWriter, r *http.Request) {
	id := param(r, "id")
	err := d.store.JobDelete(r.Context(), &store.JobDeleteParams{ID: id})
	back := safeBack(r.PostFormValue("back"), "/jobs")
	if u, _ := url.Parse(back); u != nil && u.Path == jobPath(id) {
		back = "/jobs" // the job's own page is gone
	}
	setFlash(w, result(err, fmt.Sprintf("Deleted job %s.", shortID(id)), "job "+shortID(id)))
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// done sets the flash for an action's outcome and redirects back.
func (d *dash) done(w http.ResponseWriter, r *http.Request, def string, err error, ok, what string) {
	if err != nil && !isUserError(err) {
		d.log.Error("dashboard action failed", "path", r.URL.Path, "err", err)
	}
	setFlash(w, result(err, ok, what))
	http.Redirect(w, r, safeBack(r.PostFormValue("back"), def), http.StatusSeeOther)
}

// result words an action's outcome for the flash.
func result(err error, ok, what string) flash {
	switch {
	case err == nil:
		return flash{OK: true, Message: ok}
	case errors.Is(err, store.ErrNotFound):
		return flash{Message: "Nothing done: " + what + " does not exist (any more)."}
	case errors.Is(err, store.ErrInvalidState):
		return flash{Message: "Nothing done: " + what + " is not in a state that allows it (it may have moved on since the page was drawn)."}
	default:
		return flash{Message: "Failed on " + what + ": " + err.Error()}
	}
}

func isUserError(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalidState)
}

// param returns the unescaped path parameter key. chi routes on the
// escaped path when the request has one, so an encoded "/" stays inside one
// segment; its parameters are then still escaped.
func param(r *http.Request, key string) string {
	v := chi.URLParam(r, key)
	if r.URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

func jobPath(id string) string { return "/jobs/" + url.PathEscape(id) }

func queuePath(name, action string) string { return "/queues/" + url.PathEscape(name) + "/" + action }

// maxBulkRetry bounds one "retry all matching" click, so that one request
// stays short however many jobs are dead; the flash says when more remain.
const maxBulkRetry = 10_000

// retryDead retries the dead jobs selected (id fields), or with all=1 every
// dead job matching the filter (queue, kind, reason fields), one JobRetry
// each, as the API would.
func (d *dash) retryDead(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm() // a malformed body reads as no fields
	ids := r.PostForm["id"]
	all := r.PostFormValue("all") != ""
	f := deadFilterOf(r.PostFormValue)
	if err := f.check(); all && err != nil {
		d.refuse(w, r, err)
		return
	}
	var retried, failed int
	more := false
	retry := func(id string) {
		if _, err := d.store.JobRetry(r.Context(), &store.JobRetryParams{ID: id, Now: d.now()}); err != nil {
			failed++
			return
		}
		retried++
	}
	var err error
	switch {
	case all:
		more, err = d.eachDead(r, f, retry)
	case len(ids) == 0:
		setFlash(w, flash{Message: "Nothing done: no job was selected. Tick the boxes of the jobs to retry, or retry all matching."})
		http.Redirect(w, r, safeBack(r.PostFormValue("back"), "/dead"), http.StatusSeeOther)
		return
	default:
		for _, id := range ids {
			retry(id)
		}
	}
	msg := fmt.Sprintf("Retried %s dead job%s.", number(int64(retried)), plural(retried))
	if failed > 0 {
		msg += fmt.Sprintf(" %d could not be retried (gone, or no longer dead).", failed)
	}
	if more {
		msg += fmt.Sprintf(" Stopped after %s: retry all again for the rest.", number(maxBulkRetry))
	}
	d.done(w, r, "/dead", err, msg, "the dead jobs")
}

// eachDead calls fn for every dead job matching f, up to maxBulkRetry; it
// reports whether more remained.
func (d *dash) eachDead(r *http.Request, f deadFilter, fn func(id string)) (bool, error) {
	if d.ins == nil {
		return false, errNoInsights
	}
	n := 0
	cursor := ""
	for {
		page, err := d.ins.JobListDead(r.Context(), &store.JobListDeadParams{
			Queue: f.Queue, Kind: f.Kind, Reason: store.DeadReason(f.Reason), Limit: 500, Cursor: cursor,
			MaxBytes: store.DefaultPageBytes})
		if err != nil {
			return false, err
		}
		for _, j := range page.Jobs {
			if n == maxBulkRetry {
				return true, nil
			}
			fn(j.ID)
			n++
		}
		if cursor = page.NextCursor; cursor == "" {
			return false, nil
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
