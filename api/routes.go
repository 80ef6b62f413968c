package api

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
)

// Handler returns the API alone: its routes, and problem+json answers for
// unknown routes (404) and wrong methods (405).
func (a *API) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(a.Edge)
	r.NotFound(notFound)
	r.MethodNotAllowed(methodNotAllowed(r))
	a.Routes(r)
	return r
}

// Routes registers the API on r, which may also serve other routes (the
// dashboard mounts at / beside it) but must not route /v1 itself. Paths
// under /v1 answer problem+json for unknown routes and wrong methods,
// whatever r's own handlers for those are; elsewhere r's handlers answer.
// r should use a.Edge, for request ids, deadlines, the Host check and
// panic recovery.
func (a *API) Routes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(a.metrics.instrument)
		r.Get("/healthz", a.healthz)
		r.Get("/readyz", a.readyz)
		r.Group(func(r chi.Router) {
			// API.md: /metrics and /openapi.yaml follow the /v1 rule.
			r.Use(a.allow(RoleAdmin, RoleProducer, RoleWorker))
			r.Get("/metrics", a.scrape.ServeHTTP)
			r.Get("/openapi.yaml", serveSpec)
		})
		r.Route("/v1", a.v1)
	})
}

// v1 registers the /v1 routes in groups by the roles API.md allows. An
// unknown route or method needs a token too (any role), so that the route
// set is no answer to a stranger's probing: 401 before 404 and 405.
func (a *API) v1(r chi.Router) {
	anyRole := a.allow(RoleAdmin, RoleProducer, RoleWorker)
	r.NotFound(anyRole(http.HandlerFunc(notFound)).ServeHTTP)
	r.MethodNotAllowed(anyRole(methodNotAllowed(r)).ServeHTTP)
	r.Use(limitBody(a.cfg.MaxBody))
	if len(a.creds) == 0 {
		r.Use(a.sameOrigin)
	}

	// A hook checks its own credential: a signature, or for scheme "none"
	// a producer or admin token.
	r.Post("/hooks/{name}", a.hook)
	r.Group(func(r chi.Router) {
		r.Use(a.allow(RoleAdmin, RoleProducer, RoleWorker))
		r.Post("/jobs", a.enqueue)
		r.Post("/jobs/batch", a.enqueueBatch)
		r.Get("/jobs", a.listJobs)
		r.Get("/jobs/{id}", a.getJob)
		r.Get("/queues", a.listQueues)
		r.Get("/workers", a.listWorkers)
		r.Get("/nodes", a.listNodes)
		r.Get("/stats", a.stats)
		r.Get("/schedules", a.listSchedules)
		r.Get("/schedules/preview", a.previewSchedule)
		r.Get("/schedules/{name}", a.getSchedule)
	})
	r.Group(func(r chi.Router) {
		r.Use(a.allow(RoleAdmin, RoleWorker))
		r.Post("/lease", a.lease)
		r.Post("/jobs/{id}/ack", a.ack)
		r.Post("/jobs/{id}/fail", a.failJob)
		r.Post("/jobs/{id}/extend", a.extend)
		r.Post("/jobs/{id}/release", a.release)
		r.Post("/settle", a.settle)
		r.Post("/workers", a.registerWorker)
		r.Post("/workers/{id}/heartbeat", a.heartbeat)
		r.Delete("/workers/{id}", a.deregisterWorker)
	})
	r.Group(func(r chi.Router) {
		r.Use(a.allow(RoleAdmin))
		r.Post("/jobs/{id}/cancel", a.cancel)
		r.Post("/jobs/{id}/retry", a.retry)
		r.Post("/jobs/{id}/run", a.run)
		r.Delete("/jobs/{id}", a.deleteJob)
		r.Post("/queues/{name}/pause", a.pauseQueue)
		r.Post("/queues/{name}/resume", a.resumeQueue)
		r.Put("/queues/{name}/limits", a.setLimits)
		r.Delete("/queues/{name}/limits", a.clearLimits)
		r.Put("/schedules/{name}", a.putSchedule)
		r.Delete("/schedules/{name}", a.deleteSchedule)
		r.Post("/schedules/{name}/pause", a.pauseSchedule)
		r.Post("/schedules/{name}/resume", a.resumeSchedule)
		r.Post("/schedules/{name}/trigger", a.triggerSchedule)
	})
}

// pathParam returns the unescaped path parameter key. chi routes on the
// escaped path when the request has one (r.URL.RawPath), so an id holding
// an encoded "/" stays one segment; its parameters are then still escaped.
func pathParam(r *http.Request, key string) string {
	v := chi.URLParam(r, key)
	if r.URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// methodNotAllowed answers with 405 and the Allow header of the route that
// exists under another method in mux.
func methodNotAllowed(mux chi.Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		path := chi.RouteContext(r.Context()).RoutePath
		if path == "" {
			path = cmp.Or(r.URL.RawPath, r.URL.Path)
		}
		var allowed []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if mux.Match(chi.NewRouteContext(), m, path) {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
		}
		writeProblem(w, newProblem(codeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.EscapedPath()))
	}
}
