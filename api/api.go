// Package api serves Tether's HTTP JSON API (shared/API.md, openapi.yaml):
// the /v1 routes, health and readiness, metrics and the spec itself.
//
// Every handler has one shape: decode, validate, one store call, encode.
// Request errors and store sentinel errors become problem+json answers in
// one place (problem.go); nothing else about HTTP leaks into the store.
package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tetherq/tether/api/webhook"
	"github.com/tetherq/tether/store"
)

// DefaultMaxBody is the request body limit when Config.MaxBody is 0.
const DefaultMaxBody = 1 << 20

// DefaultBodyTimeout is how long a request's body may take to arrive when
// Config.BodyTimeout is 0.
const DefaultBodyTimeout = 30 * time.Second

// DefaultMaxPollsPerWorker is how many long-poll leases one worker id may
// have waiting at once when Config.MaxPollsPerWorker is 0: enough for a
// worker that polls from a few goroutines, few enough that one id cannot
// pin a server's connections.
const DefaultMaxPollsPerWorker = 8

// DefaultMaxPollsPerToken is how many long-poll leases may wait at once
// under one token when Config.MaxPollsPerToken is 0: many workers share
// one token, but a leaked token, or a client looping through fresh worker
// ids, must not pin the server's connections without end.
const DefaultMaxPollsPerToken = 10_000

// Config is what the API needs. Store is required; every other field has a
// default.
type Config struct {
	Store store.Store
	// Now is the clock corrected to the store's; default time.Now. It is
	// called from many requests at once and must be safe for that.
	Now func() time.Time
	// NodeID and Version describe this server node.
	NodeID  string
	Version string
	// HeartbeatInterval and DeadAfter are told to registering workers and
	// decide the liveness shown for each worker.
	HeartbeatInterval time.Duration
	DeadAfter         time.Duration
	// MaxBody limits every request body, in bytes.
	MaxBody int64
	// BodyTimeout bounds the time to receive a request's body, on every
	// route that passes Edge; default DefaultBodyTimeout.
	BodyTimeout time.Duration
	// PageBytes is the byte budget of a GET /v1/jobs page (store.Budget);
	// default store.DefaultPageBytes.
	PageBytes int
	// Registerer receives the API's metrics; Gatherer serves /metrics. When
	// Registerer is a *prometheus.Registry it is the default Gatherer; with
	// neither, the API keeps a registry of its own.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	Logger     *slog.Logger
	// Shutdown is closed (never sent on) when graceful shutdown begins:
	// waiting long-polls then answer {"jobs": []} at once, so that
	// http.Server.Shutdown does not wait out their wait_ms. Nil: never.
	Shutdown <-chan struct{}

	// Tokens are the bearer tokens and their roles. Empty: no auth, every
	// route is open (cmd/server allows that on loopback only), but /v1
	// refuses writes that a browser sent for a page of another origin.
	Tokens []Token
	// AllowedHosts are the host names (without port) this server answers
	// to; a request with another Host is 403 forbidden, except /healthz and
	// /readyz. Empty: any. cmd/server sets the loopback names when it
	// serves a loopback address without tokens (DNS rebinding).
	AllowedHosts []string
	// AuthThrottle limits failed authentication per client address; give
	// the dashboard's login the same one, so that both doors count
	// together. Default NewAuthThrottle(DefaultAuthFailures,
	// DefaultAuthFailureWindow).
	AuthThrottle *AuthThrottle
	// RateLimits limit each token's requests by its role; a role absent
	// (or with PerSecond 0) is unlimited.
	RateLimits map[Role]RateLimit
	// Hooks are the webhook endpoints, POST /v1/hooks/{name}.
	Hooks []*webhook.Hook
	// MaxPollsPerWorker caps the long-poll leases (wait_ms > 0) one worker
	// id may have waiting; one more is 429 rate_limited. Default
	// DefaultMaxPollsPerWorker.
	MaxPollsPerWorker int
	// MaxPollsPerToken caps the long-poll leases waiting under one token
	// (with Tokens only); one more is 429 rate_limited. Default
	// DefaultMaxPollsPerToken.
	MaxPollsPerToken int
}

// API is the HTTP API over one store. It is safe for concurrent use.
type API struct {
	cfg     Config
	store   store.Store
	now     func() time.Time
	log     *slog.Logger
	metrics *metrics
	// scrape serves /metrics.
	scrape http.Handler
	creds  credentials
	hooks  map[string]*webhook.Hook
	polls  *pollCount // per worker id
	// waiting counts the long-polls asleep until a wake-up, for
	// tether_long_polls_waiting.
	waiting atomic.Int64
	// tokenPolls counts per token, by credential.key.
	tokenPolls *pollCount
	hosts      map[string]bool // AllowedHosts by hostName; nil: any
}

// New checks cfg, fills its defaults and registers the API's metrics. It
// returns an error if Store is nil or the metrics are already registered.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("api: Config.Store is required")
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
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.PageBytes <= 0 {
		cfg.PageBytes = store.DefaultPageBytes
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.MaxPollsPerWorker <= 0 {
		cfg.MaxPollsPerWorker = DefaultMaxPollsPerWorker
	}
	if cfg.MaxPollsPerToken <= 0 {
		cfg.MaxPollsPerToken = DefaultMaxPollsPerToken
	}
	if cfg.AuthThrottle == nil {
		cfg.AuthThrottle = NewAuthThrottle(DefaultAuthFailures, DefaultAuthFailureWindow)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = slog.New(LogRequestIDs(cfg.Logger.Handler()))
	reg, gather := cfg.Registerer, cfg.Gatherer
	if reg == nil {
		own := prometheus.NewRegistry()
		reg, gather = own, own
	}
	if gather == nil {
		r, ok := reg.(*prometheus.Registry)
		if !ok {
			return nil, errors.New("api: Config.Gatherer is required when Registerer is not a *prometheus.Registry")
		}
		gather = r
	}
	a := &API{cfg: cfg, store: cfg.Store, now: cfg.Now, log: cfg.Logger, scrape: metricsHandler(gather),
		creds: newCredentials(cfg.Tokens, cfg.RateLimits), hooks: map[string]*webhook.Hook{},
		polls:      newPollCount(cfg.MaxPollsPerWorker),
		tokenPolls: newPollCount(cfg.MaxPollsPerToken)}
	for _, h := range cfg.AllowedHosts {
		if a.hosts == nil {
			a.hosts = map[string]bool{}
		}
		a.hosts[hostName(h)] = true
	}
	for _, h := range cfg.Hooks {
		if a.hooks[h.Name] != nil {
			return nil, fmt.Errorf("api: two hooks are named %q", h.Name)
		}
		a.hooks[h.Name] = h
	}
	m, err := newMetrics(reg, a)
	if err != nil {
		return nil, err
	}
	a.metrics = m
	return a, nil
}
