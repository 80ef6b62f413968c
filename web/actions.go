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
	back := safeBack(r.PostFormValue("back"), "/jobs")
	if d.confirmDelete(w, r, id, back) {
		return
	}
	err := d.store.JobDelete(r.Context(), &store.JobDeleteParams{ID: id})
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
