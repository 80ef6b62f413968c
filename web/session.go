package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dashboard sessions. With tokens configured, every dashboard request needs
// a session cookie, which /login sets once it is given an admin token. The
// cookie holds no token: only its expiry and a fingerprint of the admin
// token that opened it, signed with HMAC-SHA256 under a key that owes
// nothing to the tokens (one derived from them would let a stolen cookie
// test guesses at the admin tokens offline). Any replica with the same key
// accepts it, and removing that admin token from the configuration ends
// its sessions. The dashboard ignores Authorization headers, and the API
// ignores this cookie: neither credential opens the other door.

// SessionCookie is the name of the dashboard's session cookie.
const SessionCookie = "tether_session"

// DefaultSessionTTL is how long a dashboard session lasts.
const DefaultSessionTTL = 12 * time.Hour

// SessionConfig configures dashboard login.
type SessionConfig struct {
	// AdminTokens are the admin bearer tokens; logging in takes one.
	AdminTokens []string
	// Key signs session cookies; every replica needs the same one. It
	// must not be empty (LoginHandler, LogoutHandler and RequireSession
	// panic), nor derived from the tokens: cmd/server takes --session-key,
	// or makes a random one at start.
	Key []byte
	// TTL is a session's life; default DefaultSessionTTL.
	TTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger records failed logins (never what was typed); default none.
	Logger *slog.Logger
	// Throttle limits failed logins per client address; nil: none.
	Throttle Throttle
}

// Throttle limits failed authentication per client address.
// *api.AuthThrottle is one; cmd/server gives the login the API's, so that
// guesses at either door count together.
type Throttle interface {
	// Try records that the client at remoteAddr presented a token at now:
	// tokenID is the SHA-256 digest of the token as a string when it is an
	// admin token, "" when it is not. It reports false, and the wait for
	// Retry-After, when the attempt is to be refused unanswered.
	Try(remoteAddr, tokenID string, now time.Time) (wait time.Duration, ok bool)
}

// sessions signs and checks session cookies under one configuration.
type sessions struct {
	key      []byte
	ttl      time.Duration
	now      func() time.Time
	log      *slog.Logger
	throttle Throttle            // may be nil
	admins   [][sha256.Size]byte // digests of the admin tokens
	prints   []string            // their fingerprints, in the same order
}

func newSessions(cfg SessionConfig) *sessions {
	if len(cfg.Key) == 0 {
		panic("web: SessionConfig.Key is empty")
	}
	s := &sessions{key: cfg.Key, ttl: cfg.TTL, now: cfg.Now, throttle: cfg.Throttle}
	if s.ttl <= 0 {
		s.ttl = DefaultSessionTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.log = cfg.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, t := range cfg.AdminTokens {
		s.admins = append(s.admins, sha256.Sum256([]byte(t)))
		s.prints = append(s.prints, s.fingerprint(t))
	}
	return s
}

func sign(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// fingerprint names an admin token in a cookie without revealing it.
func (s *sessions) fingerprint(token string) string {
	return hex.EncodeToString(sign(s.key, []byte("token\x00"+token))[:12])
}

// admin returns the fingerprint of token and its id for Throttle if it is
// an admin token. It compares with every admin token in constant time.
func (s *sessions) admin(token string) (fp, id string, ok bool) {
	d := sha256.Sum256([]byte(token))
	found := -1
	for i, a := range s.admins {
		if subtle.ConstantTimeCompare(d[:], a[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", "", false
	}
	return s.prints[found], string(d[:]), true
}

// issue returns a cookie value for a session of the admin token with
// fingerprint fp.
func (s *sessions) issue(fp string) string {
	payload := "v1|" + strconv.FormatInt(s.now().Add(s.ttl).Unix(), 10) + "|" + fp
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(sign(s.key, []byte(payload)))
}

// valid reports whether a cookie value is a live session: signed with the
// key, not expired, of an admin token still configured.
func (s *sessions) valid(value string) bool {
	enc := base64.RawURLEncoding
	p64, m64, ok := strings.Cut(value, ".")
	payload, err1 := enc.DecodeString(p64)
	mac, err2 := enc.DecodeString(m64)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, sign(s.key, payload)) {
		return false
	}
	parts := strings.Split(string(payload), "|")
	if len(parts) != 3 || parts[0] != "v1" {
		return false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	return err == nil && s.now().Unix() < exp && slices.Contains(s.prints, parts[2])
}

// fromRequest reports whether r carries a live session cookie.
func (s *sessions) fromRequest(r *http.Request) bool {
	c, err := r.Cookie(SessionCookie)
	return err == nil && s.valid(c.Value)
}

// cookie is the session cookie with value; maxAge < 0 deletes it.
func (s *sessions) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: SessionCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		// Behind a TLS-terminating proxy the request itself is plain HTTP.
		Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
	}
}

// RequireSession lets requests with a live session through and answers any
// other with 303 to /login; a bearer token is no session. The dashboard's
// static assets need none (the login page may use them). Wrap the
// dashboard in it when tokens are configured.
func RequireSession(cfg SessionConfig) func(http.Handler) http.Handler {
	s := newSessions(cfg)
	return func(next http.Handler) http.Handler {
		return noFraming(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.fromRequest(r) || (r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/static/")) {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, "/login", http.StatusSeeOther)
		}))
	}
}
