package api

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/tetherq/tether/store"
)

type registerRequest struct {
	ID     *string           `json:"id"`
	Queues []string          `json:"queues"`
	Labels map[string]string `json:"labels"`
}

func (req *registerRequest) check() error {
	return firstErr(
		checkOptional(req.ID, func(v string) error { return checkWorkerID("id", v) }),
		checkNames("queues", req.Queues, false),
		checkLabels("labels", req.Labels),
	)
}

type registerView struct {
	ID                  string `json:"id"`
	HeartbeatIntervalMS int64  `json:"heartbeat_interval_ms"`
	DeadAfterMS         int64  `json:"dead_after_ms"`
}

// registerWorker handles POST /v1/workers: 201 with the worker's id (one
// is generated when none is given) and the liveness timing it must keep.
func (a *API) registerWorker(w http.ResponseWriter, r *http.Request) {
	var req registerRequest
	if !a.decode(w, r, &req) {
		return
	}
	id := "w-" + uuid.NewString()
	setIf(&id, req.ID)
	wk, err := a.store.WorkerRegister(r.Context(), &store.WorkerRegisterParams{
		ID: id, Queues: req.Queues, Labels: req.Labels, Now: a.now(),
	})
	if err != nil {
		a.fail(w, r, err, aboutWorker(id))
		return
	}
	writeJSON(w, http.StatusCreated, registerView{
		ID:                  wk.ID,
		HeartbeatIntervalMS: a.cfg.HeartbeatInterval.Milliseconds(),
		DeadAfterMS:         a.cfg.DeadAfter.Milliseconds(),
	})
}

type heartbeatRequest struct {
	InFlight []string `json:"in_flight"`
}

func (req *heartbeatRequest) check() error {
	if len(req.InFlight) > maxItems {
		return invalid("in_flight", "must have at most %d items", maxItems)
	}
	return nil
}

type heartbeatView struct {
	Cancel []string `json:"cancel"`
	Lost   []string `json:"lost"`
	// The rhythm, told on every heartbeat: a worker need not remember its
	// registration's.
	HeartbeatIntervalMS int64 `json:"heartbeat_interval_ms"`
	DeadAfterMS         int64 `json:"dead_after_ms"`
}

// heartbeat handles POST /v1/workers/{id}/heartbeat: a sign of life (an
// unknown worker is registered), answered with the held jobs whose
// cancellation was requested and the jobs the worker lost.
func (a *API) heartbeat(w http.ResponseWriter, r *http.Request) {
	id := pathParam(r, "id")
	if err := checkWorkerID("id", id); err != nil {
		a.fail(w, r, err, aboutWorker(id))
		return
	}
	var req heartbeatRequest
	if !a.decode(w, r, &req) {
		return
	}
	res, err := a.store.WorkerHeartbeat(r.Context(), &store.WorkerHeartbeatParams{
		ID: id, InFlight: req.InFlight, Now: a.now(),
	})
	if err != nil {
		a.fail(w, r, err, aboutWorker(id))
		return
	}
	writeJSON(w, http.StatusOK, heartbeatView{Cancel: orEmpty(res.Cancel), Lost: orEmpty(res.Lost),
		HeartbeatIntervalMS: a.cfg.HeartbeatInterval.Milliseconds(), DeadAfterMS: a.cfg.DeadAfter.Milliseconds()})
}

// deregisterWorker handles DELETE /v1/workers/{id}: 204 after its running
// jobs are released (or cancelled, when cancellation was requested), 404
// for an unknown worker. Its long-polls answer {"jobs": []} at once: on
// every replica through the store's wake-ups (store.WorkerEnded), and on
// this one also directly (polls.end), which holds while a shared store's
// wake-up channel is down.
func (a *API) deregisterWorker(w http.ResponseWriter, r *http.Request) {
	id := pathParam(r, "id")
	a.polls.end(id)
	err := a.store.WorkerDeregister(r.Context(), &store.WorkerDeregisterParams{ID: id, Now: a.now()})
	if err != nil {
		a.fail(w, r, err, aboutWorker(id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type workersView struct {
	Workers []workerView `json:"workers"`
}

// listWorkers handles GET /v1/workers, each with its liveness now.
func (a *API) listWorkers(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	workers, err := a.store.WorkerList(r.Context(), &store.WorkerListParams{})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v := workersView{Workers: make([]workerView, 0, len(workers))}
	for _, wk := range workers {
		v.Workers = append(v.Workers, a.viewWorker(wk, now))
	}
	writeJSON(w, http.StatusOK, v)
}
