// Package web serves Tether's dashboard: server-rendered pages of queues,
// workers, orphaned and rescued jobs, retries and the dead, built with templ.
//
// Handlers build view models from the store; templates (one .templ per
// panel, its view model in the .go file beside it) only render them. Every
// page works without JavaScript: actions are form POSTs answered with a 303
// back to the page and a flash message. With JavaScript, a small script of
// ours listens to /events (Server-Sent Events, fed by one shared poller per
// process) and re-fetches only the panels a change concerns, as
// ?fragment=panel-id of the same page.
package web

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/tetherq/tether/store"
)

// Defaults of Config.
const (
	// DefaultPollInterval is how often the shared poller reads the store's
	// aggregates: live pages change at most this often.
	DefaultPollInterval = time.Second
	// DefaultPingInterval keeps idle event streams open through proxies
	// that close silent connections.
	DefaultPingInterval = 15 * time.Second
)

// Config is what the dashboard needs. Store is required; every other field
// has a default.
type Config struct {
	Store store.Store
	// Insights serves the dashboard's own lists (retries, dead jobs,
	// search, rescues, throughput). Nil: the pages that need it say that
	// this backend does not provide them.
	Insights store.Insights
	// Now is the clock corrected to the store's; default time.Now.
	Now func() time.Time
	// NodeID and Version describe this server node.
	NodeID  string
	Version string
	// HeartbeatInterval and DeadAfter decide the liveness shown for each
	// worker, as the API does.
	HeartbeatInterval time.Duration
	DeadAfter         time.Duration
	// PollInterval and PingInterval tune /events; see the defaults.
	PollInterval time.Duration
	PingInterval time.Duration
	Logger       *slog.Logger
	// Shutdown is closed when graceful shutdown begins: event streams end,
	// so that http.Server.Shutdown need not wait for them. Nil: never.
	Shutdown <-chan struct{}
}

// dash is the dashboard over one store.
type dash struct {
	cfg   Config
	store store.Store
	ins   store.Insights // may be nil
	now   func() time.Time
	log   *slog.Logger
	feed  *feed
}

// New checks cfg and returns the dashboard's handler. Unsafe requests from
// another origin are refused with 403 (http.CrossOriginProtection) before
// any handler runs, and no answer may be framed by another page.
func New(cfg Config) (http.Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: Config.Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = store.DefaultHeartbeatInterval
	}
	if cfg.DeadAfter <= 0 {
		cfg.DeadAfter = store.DefaultDeadAfter
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &dash{cfg: cfg, store: cfg.Store, ins: cfg.Insights, now: cfg.Now, log: cfg.Logger}
	d.feed = newFeed(d.snapshot, cfg.PollInterval, cfg.Shutdown, cfg.Logger)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(d.crossOrigin))
	return noFraming(cop.Handler(d.routes())), nil
}

func (d *dash) routes() http.Handler {
	r := chi.NewRouter()
	r.NotFound(d.notFound)
	for _, p := range d.pages() {
		r.Get(p.path, d.servePage(p))
	}
	r.Get("/events", d.events)
	r.Get("/static/*", serveStatic)
	r.Post("/queues/{name}/pause", d.pauseQueue)
	r.Post("/queues/{name}/resume", d.resumeQueue)
	r.Post("/queues/{name}/limits", d.setLimits)
	r.Post("/jobs/{id}/retry", d.retryJob)
	r.Post("/jobs/{id}/run", d.runJob)
	r.Post("/jobs/{id}/cancel", d.cancelJob)
	r.Post("/jobs/{id}/delete", d.deleteJob)
	r.Post("/dead/retry", d.retryDead)
	r.Post("/retries/retry", d.retryRetrying)
	r.Post("/jobs/bulk", d.bulkJobs)
	r.Post("/schedules/{name}/pause", d.pauseSchedule)
	r.Post("/schedules/{name}/resume", d.resumeSchedule)
	r.Post("/schedules/{name}/trigger", d.triggerSchedule)
	r.Post("/schedules/{name}/delete", d.deleteSchedule)
	return r
}

// workerState is w's liveness at now, as the API reports it.
func (d *dash) workerState(last, now time.Time) store.WorkerState {
	return store.WorkerStateAt(last, now, d.cfg.HeartbeatInterval, d.cfg.DeadAfter)
}
