package api

import (
	"net/http"

	"github.com/tetherq/tether/store"
)

type nodesView struct {
	Nodes []nodeView `json:"nodes"`
}

// listNodes handles GET /v1/nodes: the server nodes, apart from workers.
func (a *API) listNodes(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	nodes, err := a.store.NodeList(r.Context(), &store.NodeListParams{})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v := nodesView{Nodes: make([]nodeView, 0, len(nodes))}
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, viewNode(n, now, a.cfg.DeadAfter))
	}
	writeJSON(w, http.StatusOK, v)
}

// stats handles GET /v1/stats: job counts by state (all six), workers by
// liveness and the rescue total.
func (a *API) stats(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	st, err := a.store.StatsGet(r.Context(), &store.StatsGetParams{Now: now})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	workers, err := a.store.WorkerList(r.Context(), &store.WorkerListParams{})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v := statsView{
		Jobs:         make(map[store.State]int64, len(store.States)),
		Workers:      map[store.WorkerState]int64{store.WorkerLive: 0, store.WorkerSuspect: 0, store.WorkerDead: 0},
		RescuesTotal: st.RescuesTotal,
	}
	for _, s := range store.States {
		v.Jobs[s] = st.Jobs[s]
	}
	for _, wk := range workers {
		v.Workers[a.workerState(wk, now)]++
	}
	writeJSON(w, http.StatusOK, v)
}
