package api

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tetherq/tether"
)

// readyTimeout bounds the store ping of /readyz, so a hung store reads as
// not ready rather than hanging the probe.
const readyTimeout = 2 * time.Second

type statusView struct {
	Status string `json:"status"`
}

// healthz answers 200 while the process serves HTTP.
func (a *API) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, statusView{Status: "ok"})
}

// readyz answers 200 when the store answers, 503 unavailable otherwise.
func (a *API) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		a.log.WarnContext(ctx, "store not ready", "err", err)
		writeProblem(w, newProblem(codeUnavailable, "the store does not answer"))
		return
	}
	writeJSON(w, http.StatusOK, statusView{Status: "ok"})
}

// metricsHandler serves g in the Prometheus text format. A failing
// collector loses its own metrics, not the whole scrape.
func metricsHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// serveSpec serves openapi.yaml.
func serveSpec(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(tether.OpenAPI)
}
