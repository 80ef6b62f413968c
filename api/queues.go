package api

import (
	"net/http"

	"github.com/tetherq/tether/store"
)

type queuesView struct {
	Queues []queueView `json:"queues"`
}

// listQueues handles GET /v1/queues: every queue with jobs or paused, with
// its counts by state.
func (a *API) listQueues(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	queues, err := a.store.QueueList(r.Context(), &store.QueueListParams{Now: now})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v := queuesView{Queues: make([]queueView, 0, len(queues))}
	for _, q := range queues {
		v.Queues = append(v.Queues, viewQueue(q, now))
	}
	writeJSON(w, http.StatusOK, v)
}

// pauseQueue handles POST /v1/queues/{name}/pause: leases skip the queue
// until it is resumed. A queue unknown so far is created paused.
func (a *API) pauseQueue(w http.ResponseWriter, r *http.Request) { a.setPaused(w, r, true) }

// resumeQueue handles POST /v1/queues/{name}/resume; waiting leasers wake.
func (a *API) resumeQueue(w http.ResponseWriter, r *http.Request) { a.setPaused(w, r, false) }

func (a *API) setPaused(w http.ResponseWriter, r *http.Request, paused bool) {
	now, name := a.now(), pathParam(r, "name")
	if err := checkName("name", name); err != nil {
		a.fail(w, r, err)
		return
	}
	q, err := a.store.QueueSetPaused(r.Context(), &store.QueueSetPausedParams{Name: name, Paused: paused, Now: now})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewQueue(q, now))
}
