package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/tetherq/tether/store"
)

// The schedule page's buttons, each the store call of its API route.

func (d *dash) pauseSchedule(w http.ResponseWriter, r *http.Request) { d.setSchedulePaused(w, r, true) }
func (d *dash) resumeSchedule(w http.ResponseWriter, r *http.Request) {
	d.setSchedulePaused(w, r, false)
}

func (d *dash) setSchedulePaused(w http.ResponseWriter, r *http.Request, paused bool) {
	name, ok := d.scheduleName(w, r)
	if !ok {
		return
	}
	_, err := d.store.ScheduleSetPaused(r.Context(), &store.ScheduleSetPausedParams{Name: name, Paused: paused, Now: d.now()})
	msg := fmt.Sprintf("Resumed schedule %s: its next fire is computed from now.", name)
	if paused {
		msg = fmt.Sprintf("Paused schedule %s.", name)
	}
	d.done(w, r, "/schedules", err, msg, "schedule "+name)
}

func (d *dash) triggerSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := d.scheduleName(w, r)
	if !ok {
		return
	}
	j, err := d.store.ScheduleTrigger(r.Context(), &store.ScheduleTriggerParams{Name: name, Now: d.now()})
	msg := ""
	if err == nil {
		msg = fmt.Sprintf("Schedule %s enqueued job %s now.", name, shortID(j.ID))
	}
	d.done(w, r, schedulePath(name), err, msg, "schedule "+name)
}

// deleteSchedule deletes an API schedule; its jobs stay. A file
// schedule is refused, as over the API: the file owns it.
func (d *dash) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := d.scheduleName(w, r)
	if !ok {
		return
	}
	err := d.store.ScheduleDelete(r.Context(), &store.ScheduleDeleteParams{Name: name, Source: store.SourceAPI})
	back := safeBack(r.PostFormValue("back"), "/schedules")
	if u, _ := url.Parse(back); err == nil && u != nil && u.Path == schedulePath(name) {
		back = "/schedules" // the schedule's own page is gone
	}
	f := result(err, fmt.Sprintf("Deleted schedule %s; the jobs it enqueued stay.", name), "schedule "+name)
	if errors.Is(err, store.ErrInvalidState) {
		f.Message = "Nothing done: schedule " + name + " comes from the schedules file. Remove it there: it is then paused, never deleted."
	}
	setFlash(w, f)
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// scheduleName reads the {name} of the path; on failure it has answered.
func (d *dash) scheduleName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := param(r, "name")
	if err := checkName("schedule", name, false); err != nil {
		d.refuse(w, r, err)
		return "", false
	}
	return name, true
}
