package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/web"
)

// shutdownTimeout bounds how long requests in flight may take to finish
// once shutdown starts; long-polls answer at once, so this is generous.
const shutdownTimeout = 10 * time.Second

// writeTimeout bounds how long an answer may take to write. Long-poll
// leases and event streams lift it for themselves.
const writeTimeout = 30 * time.Second

// server is one process's API, dashboard and scheduler over a store.
type server struct {
	cfg      config
	log      *slog.Logger
	clock    *scheduler.Clock
	sched    *scheduler.Scheduler
	api      *api.API
	http     *http.Server
	shutdown chan struct{} // closed first on shutdown: long-polls answer empty
}

func newServer(cfg config, st store.Store, clock *scheduler.Clock, log *slog.Logger, version string) (*server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &server{cfg: cfg, log: log, clock: clock, shutdown: make(chan struct{})}
	sched, err := scheduler.New(scheduler.Config{
		Store: st, NodeID: cfg.nodeID, Version: version,
		Tick: cfg.tick, DeadAfter: cfg.deadAfter, MaxRescues: cfg.maxRescues,
		RetentionSucceeded: cfg.retentionSucceeded, RetentionDead: cfg.retentionDead,
		Now: clock.Now, Logger: log.With("component", "scheduler"), Registerer: reg,
	})
	if err != nil {
		return nil, err
	}
	throttle := api.NewAuthThrottle(cfg.authFailures, cfg.authWindow)
	a, err := api.New(api.Config{
		Store: st, Now: clock.Now, NodeID: cfg.nodeID, Version: version,
		HeartbeatInterval: cfg.heartbeatInterval, DeadAfter: cfg.deadAfter,
		MaxBody: int64(cfg.maxBody), BodyTimeout: cfg.bodyTimeout,
		Registerer: reg, Gatherer: reg, Logger: log.With("component", "api"),
		Shutdown: s.shutdown,
		Tokens:   cfg.tokenList, RateLimits: cfg.rateLimits(), Hooks: cfg.hooks, MaxPollsPerWorker: cfg.maxPolls,
		MaxPollsPerToken: cfg.maxTokenPolls,
		AllowedHosts:     cfg.hosts(cfg.addr), AuthThrottle: throttle,
	})
	if err != nil {
		return nil, err
	}
	ins, _ := st.(store.Insights) // nil: the dashboard says what it cannot show
	dash, err := web.New(web.Config{
		Store: st, Insights: ins, Now: clock.Now, NodeID: cfg.nodeID, Version: version,
		HeartbeatInterval: cfg.heartbeatInterval, DeadAfter: cfg.deadAfter,
		Logger: log.With("component", "web"), Shutdown: s.shutdown,
	})
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Use(a.Edge)
	a.Routes(r)
	r.Handle("/*", cfg.withLogin(r, dash, throttle, clock.Now, log.With("component", "web")))
	s.sched, s.api = sched, a
	s.http = &http.Server{
		Handler:           r,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// serve listens, prints the address line to stdout, and serves until ctx
// is done or serving fails; then it shuts down in order: long-polls answer
// empty, requests in flight finish, the tick in progress finishes.
func (s *server) serve(ctx context.Context, stdout io.Writer) error {
	ln, err := net.Listen("tcp", s.cfg.addr)
	if err != nil {
		return err
	}
	ln = s.api.LimitConns(ln, s.cfg.maxConnsPerIP)
	bg, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.sched.Run(bg) })
	wg.Go(func() { _ = s.clock.Run(bg) })
	served := make(chan error, 1)
	go func() { served <- s.http.Serve(ln) }()
	s.log.Info("started", "node", s.cfg.nodeID, "dead_after", s.cfg.deadAfter, "tick", s.cfg.tick,
		"tokens", len(s.cfg.tokenList), "hooks", len(s.cfg.hooks))
	s.cfg.warn(s.log, s.cfg.addr)
	// Last: whoever waits for this line (a supervisor, a test) has every
	// start-up line before it.
	fmt.Fprintf(stdout, "tether listening on http://%s store=%s\n", ln.Addr(), redact(s.cfg.store))

	select {
	case <-ctx.Done():
		err = nil
	case err = <-served:
	}
	s.log.Info("shutting down")
	close(s.shutdown)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if e := s.http.Shutdown(sctx); e != nil {
		err = errors.Join(err, fmt.Errorf("shut down http: %w", e), s.http.Close())
	}
	stopBg()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
