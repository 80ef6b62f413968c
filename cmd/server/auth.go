package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/api/webhook"
	"github.com/tetherq/tether/web"
)

// Defaults of the per-token rate limit: a safety net against a runaway
// client, far above what one worker or producer does. Admin tokens (people
// and their scripts) have none unless --rate-limit-admin says so.
const (
	defaultRateLimit = 1000
	defaultRateBurst = 2000
)

// minTokenLen is the length below which a token draws a warning at start:
// a short token can be guessed.
const minTokenLen = 16

// security is the configuration of who may do what: tokens, the dashboard
// session key, webhooks, rate limits. Secrets in it are never logged.
type security struct {
	tokens         string
	tokensFile     string
	insecureNoAuth bool
	sessionKey     string
	hooksFile      string
	rateLimit      float64
	rateBurst      int
	rateLimitAdmin float64
	maxPolls       int
	maxTokenPolls  int
	maxConnsPerIP  int
	allowedHosts   string
	authFailures   int
	authWindow     time.Duration

	// Loaded from the above by load.
	tokenList []api.Token
	hooks     []*webhook.Hook
	// randomKey is set when load made sessionKey up.
	randomKey bool
}

func (s *security) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.tokens, "tokens", "", "bearer tokens as secret:role,… (roles admin, producer, worker); prefer TETHER_TOKENS or --tokens-file, since flags show in ps")
	fs.StringVar(&s.tokensFile, "tokens-file", "", "file of secret:role entries, one a line or comma-separated")
	fs.BoolVar(&s.insecureNoAuth, "insecure-no-auth", false, "allow serving a non-loopback address without tokens")
	fs.StringVar(&s.sessionKey, "session-key", "", "key signing dashboard sessions, the same on every replica (default random at each start: sessions then end at restart and hold on one replica only)")
	fs.StringVar(&s.hooksFile, "hooks", "", "webhooks file (JSON): name, queue, kind, scheme, secrets of each hook")
	fs.Float64Var(&s.rateLimit, "rate-limit", defaultRateLimit, "requests per second per producer or worker token (0: unlimited)")
	fs.IntVar(&s.rateBurst, "rate-burst", defaultRateBurst, "requests a token may make at once above its rate")
	fs.Float64Var(&s.rateLimitAdmin, "rate-limit-admin", 0, "requests per second per admin token (0: unlimited)")
	fs.IntVar(&s.maxPolls, "max-polls-per-worker", api.DefaultMaxPollsPerWorker, "long-poll leases one worker id may have waiting; one more is 429")
	fs.IntVar(&s.maxTokenPolls, "max-polls-per-token", api.DefaultMaxPollsPerToken, "long-poll leases that may wait at once under one token, whatever their worker ids; one more is 429")
	fs.IntVar(&s.authFailures, "auth-failures", api.DefaultAuthFailures, "failed authentications (wrong bearer tokens, failed logins) one client address may make at once, and per --auth-failure-window; more is 429 (0: no limit)")
	fs.DurationVar(&s.authWindow, "auth-failure-window", api.DefaultAuthFailureWindow, "the window of --auth-failures")
	fs.StringVar(&s.allowedHosts, "allowed-hosts", "", "host names the server answers to, comma-separated, any port; another Host is 403 (default: the loopback names when serving a loopback address without tokens, else any)")
	fs.IntVar(&s.maxConnsPerIP, "max-conns-per-ip", api.DefaultMaxConnsPerClient, "connections one client address (an IPv6 /64) may have open; more are closed at once (0: no cap)")
}

// load reads the tokens and hooks and checks the whole: above all, that a
// server reachable from other machines does not run without tokens.
func (s *security) load(addr string) error {
	if s.tokens != "" && s.tokensFile != "" {
		return errors.New("give --tokens or --tokens-file, not both")
	}
	src, from := s.tokens, "--tokens"
	if s.tokensFile != "" {
		from = "--tokens-file " + s.tokensFile
		b, err := os.ReadFile(s.tokensFile)
		if err != nil {
			return fmt.Errorf("--tokens-file: %w", err)
		}
		src = string(b)
	}
	var err error
	if s.tokenList, err = api.ParseTokens(src); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if s.tokensFile != "" && len(s.tokenList) == 0 {
		return fmt.Errorf("--tokens-file %s holds no token", s.tokensFile)
	}
	if s.hooksFile != "" {
		if s.hooks, err = webhook.Load(s.hooksFile); err != nil {
			return fmt.Errorf("--hooks: %w", err)
		}
	}
	var errs []error
	if len(s.tokenList) == 0 && !s.insecureNoAuth && exposed(addr) {
		errs = append(errs, fmt.Errorf("refusing to listen on %s without tokens: anyone who reaches it could "+
			"enqueue, lease and delete jobs. Set --tokens or --tokens-file (TETHER_TOKENS, TETHER_TOKENS_FILE), "+
			"listen on a loopback address, or pass --insecure-no-auth to serve it open anyway", addr))
	}
	if s.sessionKey != "" && len(s.sessionKey) < minTokenLen {
		errs = append(errs, fmt.Errorf("--session-key must be at least %d characters", minTokenLen))
	}
	if s.sessionKey == "" && len(s.tokenList) > 0 {
		// Not derived from the tokens: a stolen cookie would then let its
		// thief test guesses at the admin tokens offline.
		s.sessionKey, s.randomKey = rand.Text(), true
	}
	if s.rateLimit < 0 || s.rateLimitAdmin < 0 || s.rateBurst < 1 {
		errs = append(errs, errors.New("--rate-limit and --rate-limit-admin must be 0 or more, --rate-burst at least 1"))
	}
	if s.maxPolls < 1 || s.maxTokenPolls < 1 {
		errs = append(errs, errors.New("--max-polls-per-worker and --max-polls-per-token must be at least 1"))
	}
	for _, h := range s.hostList() {
		if _, _, err := net.SplitHostPort(h); err == nil || h == "" || strings.ContainsAny(h, "/ \t*") {
			errs = append(errs, fmt.Errorf("--allowed-hosts: %q is not a host name without port", h))
		}
	}
	if s.authFailures < 0 || s.authWindow <= 0 {
		errs = append(errs, errors.New("--auth-failures must be 0 (no limit) or more, --auth-failure-window positive"))
	}
	if s.maxConnsPerIP < 0 {
		errs = append(errs, errors.New("--max-conns-per-ip must be 0 (no cap) or more"))
	}
	return errors.Join(errs...)
}

// exposed reports whether addr may be reached from other machines: any
// address but a loopback IP or "localhost". Host names are not resolved,
// so an unknown one counts as exposed.
func exposed(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// hostList is --allowed-hosts split at its commas.
func (s *security) hostList() []string {
	if s.allowedHosts == "" {
		return nil
	}
	hosts := strings.Split(s.allowedHosts, ",")
	for i := range hosts {
		hosts[i] = strings.TrimSpace(hosts[i])
	}
	return hosts
}

// hosts are the Host names the server answers to (api.Config.AllowedHosts):
// --allowed-hosts when given; serving a loopback address without tokens,
// the loopback names and the address's own, since a page of any site could
// otherwise reach the open API through DNS rebinding; else any (nil). A
// server open beyond loopback (--insecure-no-auth) is reached by names
// only its operator knows, so it takes any unless told.
func (s *security) hosts(addr string) []string {
	if s.allowedHosts != "" {
		return s.hostList()
	}
	if len(s.tokenList) > 0 || exposed(addr) {
		return nil
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, _, err := net.SplitHostPort(addr); err == nil && !slices.Contains(hosts, h) {
		hosts = append(hosts, h)
	}
	return hosts
}

// rateLimits are the per-role limits for api.Config.
func (s *security) rateLimits() map[api.Role]api.RateLimit {
	worker := api.RateLimit{PerSecond: s.rateLimit, Burst: s.rateBurst}
	return map[api.Role]api.RateLimit{
		api.RoleProducer: worker, api.RoleWorker: worker,
		api.RoleAdmin: {PerSecond: s.rateLimitAdmin, Burst: s.rateBurst},
	}
}

// warn logs what is allowed but unwise: serving open beyond loopback,
// sessions under a key of this process alone, and short tokens (by
// position and role, never the token).
func (s *security) warn(log *slog.Logger, addr string) {
	if len(s.tokenList) == 0 && exposed(addr) {
		log.Warn("serving without auth on a non-loopback address (--insecure-no-auth)", "addr", addr)
		if s.allowedHosts == "" {
			log.Warn("any Host is answered: set --allowed-hosts to the names clients use, " +
				"so that no web page can reach this open server through DNS rebinding")
		}
	}
	if s.randomKey {
		log.Warn("dashboard sessions are signed with a key made at start: they end when this process restarts " +
			"and other replicas refuse them; set --session-key (the same on every replica) to keep them")
	}
	for i, t := range s.tokenList {
		if len(t.Secret) < minTokenLen {
			log.Warn("a token is short enough to guess; use at least 32 random characters",
				"token", i+1, "role", string(t.Role))
		}
	}
}

// withLogin puts the dashboard h behind a session when tokens are
// configured, registering /login and /logout on r; without tokens it
// returns h as is. Failed logins count in throttle, the API's.
func (s *security) withLogin(r chi.Router, h http.Handler, throttle *api.AuthThrottle, now func() time.Time, log *slog.Logger) http.Handler {
	if len(s.tokenList) == 0 {
		return h
	}
	cfg := web.SessionConfig{Key: []byte(s.sessionKey), Logger: log, Throttle: throttle, Now: now}
	for _, t := range s.tokenList {
		if t.Role == api.RoleAdmin {
			cfg.AdminTokens = append(cfg.AdminTokens, t.Secret)
		}
	}
	r.Handle("/login", web.LoginHandler(cfg))
	r.Handle("/logout", web.LogoutHandler(cfg))
	return web.RequireSession(cfg)(h)
}
