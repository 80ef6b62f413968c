package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/tetherq/tether/store"
)

// cancel handles POST /v1/jobs/{id}/cancel: a waiting job is cancelled at
// once, a running one gets cancel_requested; a finished one is 409.
func (a *API) cancel(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	job, err := a.store.JobCancel(r.Context(), &store.JobCancelParams{ID: id, Now: now})
	a.answerJob(w, r, id, job, err, now)
}

type retryRequest struct {
	Payload json.RawMessage `json:"payload"`
}

func (req *retryRequest) check() error { return nil }

// retry handles POST /v1/jobs/{id}/retry: a dead or cancelled job goes back
// to available, with a new payload when one is given (null keeps it).
func (a *API) retry(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	var req retryRequest
	if !a.decode(w, r, &req) {
		return
	}
	job, err := a.store.JobRetry(r.Context(), &store.JobRetryParams{ID: id, Payload: nullAsNone(req.Payload), Now: now})
	a.answerJob(w, r, id, job, err, now)
}

// run handles POST /v1/jobs/{id}/run: a scheduled job becomes available now.
func (a *API) run(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	job, err := a.store.JobRun(r.Context(), &store.JobRunParams{ID: id, Now: now})
	a.answerJob(w, r, id, job, err, now)
}

// deleteJob handles DELETE /v1/jobs/{id}: 204, or 409 while it runs.
func (a *API) deleteJob(w http.ResponseWriter, r *http.Request) {
	id := pathParam(r, "id")
	if err := a.store.JobDelete(r.Context(), &store.JobDeleteParams{ID: id}); err != nil {
		a.fail(w, r, err, aboutJob(id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// answerJob answers the outcome of a store call on job id: the job, or the
// problem err maps to.
func (a *API) answerJob(w http.ResponseWriter, r *http.Request, id string, job *store.Job, err error, now time.Time) {
	if err != nil {
		a.fail(w, r, err, aboutJob(id))
		return
	}
	writeJSON(w, http.StatusOK, viewJob(job, now))
}
