package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/tetherq/tether/store"
)

// listSchedules handles GET /v1/schedules: every schedule, by name.
func (a *API) listSchedules(w http.ResponseWriter, r *http.Request) {
	list, err := a.store.ScheduleList(r.Context(), &store.ScheduleListParams{})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v := schedulesView{Schedules: make([]*scheduleView, len(list))}
	for i, s := range list {
		v.Schedules[i] = viewSchedule(s)
	}
	writeJSON(w, http.StatusOK, v)
}

// scheduleName reads and checks the {name} of the path; on failure it has
// answered.
func (a *API) scheduleName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := pathParam(r, "name")
	if err := checkName("name", name); err != nil {
		a.fail(w, r, err)
		return "", false
	}
	return name, true
}

// failSchedule answers a schedule call's error, naming the schedule.
func (a *API) failSchedule(w http.ResponseWriter, r *http.Request, name string, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, newProblem(codeNotFound, "no schedule is named "+strconv.Quote(name)))
	case errors.Is(err, store.ErrInvalidState):
		writeProblem(w, newProblem(codeInvalidState, "schedule "+strconv.Quote(name)+
			" comes from the schedules file: change it there"))
	default:
		a.fail(w, r, err)
	}
}

// getSchedule handles GET /v1/schedules/{name}.
func (a *API) getSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := a.scheduleName(w, r)
	if !ok {
		return
	}
	s, err := a.store.ScheduleGet(r.Context(), &store.ScheduleGetParams{Name: name})
	if err != nil {
		a.failSchedule(w, r, name, err)
		return
	}
	writeJSON(w, http.StatusOK, viewSchedule(s))
}

// putSchedule handles PUT /v1/schedules/{name}: 201 created, or 200
// replaced with version + 1 and next_fire_at recomputed from now. A file
// schedule is read-only here (409).
func (a *API) putSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := a.scheduleName(w, r)
	if !ok {
		return
	}
	body, err := readBody(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	spec, err := decodeScheduleSpec(body, "", name)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	res, err := a.store.ScheduleUpsert(r.Context(), &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceAPI, Now: a.now()})
	if err != nil {
		a.failSchedule(w, r, name, err)
		return
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, viewSchedule(res.Schedule))
}

// deleteSchedule handles DELETE /v1/schedules/{name}; the jobs it
// enqueued stay. A file schedule is read-only here (409).
func (a *API) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := a.scheduleName(w, r)
	if !ok {
		return
	}
	err := a.store.ScheduleDelete(r.Context(), &store.ScheduleDeleteParams{Name: name, Source: store.SourceAPI})
	if err != nil {
		a.failSchedule(w, r, name, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pauseSchedule and resumeSchedule handle POST
// /v1/schedules/{name}/pause and /resume; resume recomputes next_fire_at
// from now, so the slots paused are not missed.
func (a *API) pauseSchedule(w http.ResponseWriter, r *http.Request) { a.setSchedulePaused(w, r, true) }
func (a *API) resumeSchedule(w http.ResponseWriter, r *http.Request) {
	a.setSchedulePaused(w, r, false)
}

func (a *API) setSchedulePaused(w http.ResponseWriter, r *http.Request, paused bool) {
	name, ok := a.scheduleName(w, r)
	if !ok {
		return
	}
	s, err := a.store.ScheduleSetPaused(r.Context(), &store.ScheduleSetPausedParams{Name: name, Paused: paused, Now: a.now()})
	if err != nil {
		a.failSchedule(w, r, name, err)
		return
	}
	writeJSON(w, http.StatusOK, viewSchedule(s))
}

// triggerSchedule handles POST /v1/schedules/{name}/trigger: 201 with the
// job enqueued now, scheduled_for now; next_fire_at is left as it is.
func (a *API) triggerSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := a.scheduleName(w, r)
	if !ok {
		return
	}
	now := a.now()
	j, err := a.store.ScheduleTrigger(r.Context(), &store.ScheduleTriggerParams{Name: name, Now: now})
	if err != nil {
		a.failSchedule(w, r, name, err)
		return
	}
	writeJSON(w, http.StatusCreated, newJobView(j, now))
}

// previewSchedule handles GET /v1/schedules/preview: the next count fire
// times of a cron expression (in timezone) or an interval, after from
// (default now).
func (a *API) previewSchedule(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	spec := store.ScheduleSpec{Cron: q.Get("cron"), Timezone: q.Get("timezone")}
	from, count := a.now(), 10
	var errs []error
	if s := q.Get("every_ms"); s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms < store.MinEvery.Milliseconds() || ms > store.MaxEvery.Milliseconds() {
			errs = append(errs, invalid("every_ms", "must be an integer in %d..%d",
				store.MinEvery.Milliseconds(), store.MaxEvery.Milliseconds()))
		}
		spec.Every = millis(ms)
	}
	if s := q.Get("from"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		errs = append(errs, when(err != nil, "from", "must be an RFC 3339 time"))
		from = t
	}
	if s := q.Get("count"); s != "" {
		n, err := strconv.Atoi(s)
		errs = append(errs, when(err != nil || n < 1 || n > maxPreviewCount, "count", "must be an integer in 1..100"))
		count = n
	}
	if err := firstErr(errs...); err != nil {
		a.fail(w, r, err)
		return
	}
	spec.Normalize()
	if err := spec.Check(); err != nil {
		if fe, ok := store.AsFieldError(err); ok {
			err = invalid(fe.Field, "%s", fe.Reason)
		}
		a.fail(w, r, err)
		return
	}
	v := previewView{Times: make([]stamp, 0, count)}
	// from itself fires when it is a slot: the preview starts at it.
	at := store.Trunc(from).Add(-time.Millisecond)
	for range count {
		if at = spec.Next(at); at.IsZero() {
			break
		}
		v.Times = append(v.Times, stamp(at))
	}
	writeJSON(w, http.StatusOK, v)
}
