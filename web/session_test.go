package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/web"
)

// dashboard stands in for the real one: 200 "dashboard" on every path.
var dashboard = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = w.Write([]byte("dashboard"))
})

type sessionClock struct{ now time.Time }

func (c *sessionClock) Now() time.Time { return c.now }

func sessionSetup(tokens ...string) (web.SessionConfig, *sessionClock) {
	c := &sessionClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	return web.SessionConfig{AdminTokens: tokens, Key: []byte("the session key of these tests"), Now: c.Now}, c
}

func serve(h http.Handler, method, path string, body string, header ...string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// login posts token to /login and returns the session cookie it set, "" if none.
func login(t *testing.T, cfg web.SessionConfig, token string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	rec := serve(web.LoginHandler(cfg), "POST", "/login", "token="+url.QueryEscape(token))
	for _, c := range rec.Result().Cookies() {
		if c.Name == web.SessionCookie {
			return rec, c.Value
		}
	}
	return rec, ""
}

func wantLoginRedirect(t *testing.T, rec *httptest.ResponseRecorder, what string) {
	t.Helper()
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login" {
		t.Errorf("%s: %d to %q, want 303 to /login", what, rec.Code, rec.Header().Get("Location"))
	}
}

func TestDashboardNeedsSession(t *testing.T) {
	t.Parallel()
	cfg, _ := sessionSetup("adm")
	h := web.RequireSession(cfg)(dashboard)
	wantLoginRedirect(t, serve(h, "GET", "/queues", ""), "no cookie")
	wantLoginRedirect(t, serve(h, "GET", "/", "", "Authorization", "Bearer adm"), "a bearer token")
	wantLoginRedirect(t, serve(h, "POST", "/queues/q/pause", ""), "an action")
	wantLoginRedirect(t, serve(h, "GET", "/", "", "Cookie", web.SessionCookie+"=adm"), "the token as cookie")
	if rec := serve(h, "GET", "/static/dashboard.css", ""); rec.Code != http.StatusOK {
		t.Errorf("static asset: %d", rec.Code)
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	cfg, clock := sessionSetup("adm", "adm-2")
	h := web.RequireSession(cfg)(dashboard)

	rec, cookie := login(t, cfg, "wrong")
	if rec.Code != http.StatusUnauthorized || cookie != "" || !strings.Contains(rec.Body.String(), "not an admin token") {
		t.Errorf("wrong token: %d cookie %q", rec.Code, cookie)
	}
	rec, cookie = login(t, cfg, "adm")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" || cookie == "" {
		t.Fatalf("login: %d to %q, cookie %q", rec.Code, rec.Header().Get("Location"), cookie)
	}
	set := rec.Header().Get("Set-Cookie")
	for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"} {
		if !strings.Contains(set, attr) {
			t.Errorf("Set-Cookie %q lacks %s", set, attr)
		}
	}
	if strings.Contains(cookie, "adm") {
		t.Errorf("the cookie holds the token: %q", cookie)
	}
	withCookie := []string{"Cookie", web.SessionCookie + "=" + cookie}
	if rec := serve(h, "GET", "/queues", "", withCookie...); rec.Code != http.StatusOK || rec.Body.String() != "dashboard" {
		t.Errorf("with the session: %d %q", rec.Code, rec.Body)
	}
	// Logged in, /login sends the browser home.
	if rec := serve(web.LoginHandler(cfg), "GET", "/login", "", withCookie...); rec.Code != http.StatusSeeOther {
		t.Errorf("GET /login with a session: %d", rec.Code)
	}
	// A cookie changed by one character is no session.
	tampered := string(cookie[0]^1) + cookie[1:]
	wantLoginRedirect(t, serve(h, "GET", "/", "", "Cookie", web.SessionCookie+"="+tampered), "a tampered cookie")
	// Sessions end after their TTL.
	clock.now = clock.now.Add(web.DefaultSessionTTL + time.Second)
	wantLoginRedirect(t, serve(h, "GET", "/", "", withCookie...), "an expired session")
}

// TestSessionAcrossReplicas: replicas with the same key accept each
// other's cookies, whatever their admin sets; one with another key (its
// own random one) refuses them, and so does a configuration without the
// admin token that opened the session.
func TestSessionAcrossReplicas(t *testing.T) {
	t.Parallel()
	cfg, _ := sessionSetup("adm", "adm-2")
	_, cookie := login(t, cfg, "adm")
	withCookie := []string{"Cookie", web.SessionCookie + "=" + cookie}

	other, _ := sessionSetup("adm", "new-admin") // another replica, same key
	if rec := serve(web.RequireSession(other)(dashboard), "GET", "/", "", withCookie...); rec.Code != http.StatusOK {
		t.Errorf("a replica with the same key refused the session: %d", rec.Code)
	}
	rotated, _ := sessionSetup("adm-2")
	wantLoginRedirect(t, serve(web.RequireSession(rotated)(dashboard), "GET", "/", "", withCookie...), "a removed token")
	rekeyed, _ := sessionSetup("adm", "adm-2")
	rekeyed.Key = []byte("another replica's own key")
	wantLoginRedirect(t, serve(web.RequireSession(rekeyed)(dashboard), "GET", "/", "", withCookie...), "another key")
}

// TestSessionNeedsKey: there is no default key to fall back on (one derived
// from the tokens would let a cookie test token guesses offline).
func TestSessionNeedsKey(t *testing.T) {
	t.Parallel()
	cfg, _ := sessionSetup("adm")
	cfg.Key = nil
	defer func() {
		if recover() == nil {
			t.Error("LoginHandler without a key did not panic")
		}
	}()
	web.LoginHandler(cfg)
}

func TestLoginCrossOriginAndLogout(t *testing.T) {
	t.Parallel()
	cfg, _ := sessionSetup("adm")
	rec := serve(web.LoginHandler(cfg), "POST", "/login", "token=adm", "Sec-Fetch-Site", "cross-site")
	if rec.Code != http.StatusForbidden || rec.Header().Get("Set-Cookie") != "" {
		t.Errorf("cross-site login: %d %q", rec.Code, rec.Header().Get("Set-Cookie"))
	}
	rec = serve(web.LogoutHandler(cfg), "POST", "/logout", "")
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("logout: %d %q", rec.Code, rec.Header().Get("Set-Cookie"))
	}
	if rec := serve(web.LoginHandler(cfg), "GET", "/login", ""); rec.Code != http.StatusOK ||
		!strings.Contains(rec.Body.String(), `name="token"`) {
		t.Errorf("login page: %d", rec.Code)
	}
	// The login page is styled by the dashboard's stylesheet, which is
	// served without a session.
	page := serve(web.LoginHandler(cfg), "GET", "/login", "").Body.String()
	i := strings.Index(page, `href="/static/dashboard.css?v=`)
	if i < 0 || !strings.Contains(page, `class="login-card"`) {
		t.Fatal("the login page does not use the dashboard's stylesheet")
	}
	css := page[i+len(`href="`):]
	css = css[:strings.IndexByte(css, '"')]
	e := setup(t)
	if rec := serve(web.RequireSession(cfg)(e.handler), "GET", css, ""); rec.Code != http.StatusOK ||
		!strings.Contains(rec.Body.String(), ".login-card") {
		t.Errorf("GET %s without a session = %d", css, rec.Code)
	}
}

// TestLoginUnreadableForm: a login form that cannot be read whole (here
// over the size limit; a body cut off at the deadline is the same) is 400,
// not a refused token.
func TestLoginUnreadableForm(t *testing.T) {
	t.Parallel()
	cfg, _ := sessionSetup("adm")
	rec := serve(web.LoginHandler(cfg), "POST", "/login", "token=adm&pad="+strings.Repeat("x", 10<<10))
	if rec.Code != http.StatusBadRequest || rec.Header().Get("Set-Cookie") != "" ||
		!strings.Contains(rec.Body.String(), "did not arrive whole") {
		t.Errorf("unreadable form: %d %q", rec.Code, rec.Header().Get("Set-Cookie"))
	}
}

// TestLoginThrottled: an address over its failed logins gets 429 with
// Retry-After for any token, the admin token too until that has logged in
// from there, and no cookie; the allowance comes back with time.
func TestLoginThrottled(t *testing.T) {
	t.Parallel()
	cfg, clock := sessionSetup("adm")
	cfg.Throttle = api.NewAuthThrottle(2, time.Minute)
	for _, wrong := range []string{"guess-1", "guess-2"} {
		if rec, _ := login(t, cfg, wrong); rec.Code != http.StatusUnauthorized {
			t.Fatalf("%s: %d, want 401", wrong, rec.Code)
		}
	}
	for _, token := range []string{"guess-3", "adm"} {
		rec, cookie := login(t, cfg, token)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "30" || cookie != "" ||
			!strings.Contains(rec.Body.String(), "try again in 30 s") {
			t.Errorf("%s when throttled: %d, Retry-After %q, cookie %q", token, rec.Code, rec.Header().Get("Retry-After"), cookie)
		}
	}
	clock.now = clock.now.Add(31 * time.Second)
	if rec, cookie := login(t, cfg, "adm"); rec.Code != http.StatusSeeOther || cookie == "" {
		t.Fatalf("admin login after the wait: %d", rec.Code)
	}
	login(t, cfg, "guess-4")
	if rec, _ := login(t, cfg, "guess-5"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("throttled again: %d, want 429", rec.Code)
	}
	if rec, cookie := login(t, cfg, "adm"); rec.Code != http.StatusSeeOther || cookie == "" {
		t.Errorf("the admin token that logged in from here was refused: %d", rec.Code)
	}
}
