package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
)

// withTokens configures adm:admin, prod:producer and work:worker.
func withTokens(c *api.Config) {
	c.Tokens = []api.Token{{Secret: "adm", Role: api.RoleAdmin}, {Secret: "prod", Role: api.RoleProducer},
		{Secret: "work", Role: api.RoleWorker}}
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

func TestAuthRoles(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens)
	job := e.do("POST", "/v1/jobs", `{"queue":"q","kind":"k"}`, bearer("adm")...).want(http.StatusCreated).job()
	lease := `{"worker_id":"w","queues":["other"]}`
	tests := []struct {
		token        string // "" for none
		method, path string
		body         string
		status       int
	}{
		{"", "GET", "/v1/queues", "", 401},
		{"nope", "GET", "/v1/queues", "", 401},
		{"adm2", "GET", "/v1/queues", "", 401},
		{"", "GET", "/healthz", "", 200},
		{"", "GET", "/metrics", "", 401},
		{"", "GET", "/openapi.yaml", "", 401},
		{"work", "GET", "/metrics", "", 200},
		{"prod", "GET", "/openapi.yaml", "", 200},

		{"prod", "POST", "/v1/jobs", `{"kind":"k"}`, 201},
		{"prod", "POST", "/v1/jobs/batch", `{"jobs":[{"kind":"k"}]}`, 201},
		{"prod", "GET", "/v1/jobs/" + job.ID, "", 200},
		{"prod", "GET", "/v1/stats", "", 200},
		{"prod", "POST", "/v1/lease", lease, 403},
		{"prod", "POST", "/v1/workers", `{}`, 403},
		{"prod", "POST", "/v1/queues/q/pause", "", 403},

		{"work", "POST", "/v1/jobs", `{"kind":"k"}`, 201},
		{"work", "GET", "/v1/workers", "", 200},
		{"work", "POST", "/v1/lease", lease, 200},
		{"work", "POST", "/v1/workers/w/heartbeat", `{}`, 200},
		{"work", "POST", "/v1/queues/q/pause", "", 403},
		{"work", "PUT", "/v1/queues/q/limits", `{"concurrency":1}`, 403},
		{"prod", "DELETE", "/v1/queues/q/limits", "", 403},
		{"work", "POST", "/v1/jobs/" + job.ID + "/cancel", "", 403},
		{"work", "DELETE", "/v1/jobs/" + job.ID, "", 403},

		{"adm", "POST", "/v1/lease", lease, 200},
		{"adm", "POST", "/v1/queues/q/pause", "", 200},
		{"adm", "POST", "/v1/queues/q/resume", "", 200},
		{"adm", "PUT", "/v1/queues/q/limits", `{"concurrency":1}`, 200},
		{"adm", "DELETE", "/v1/queues/q/limits", "", 200},
		{"adm", "POST", "/v1/jobs/" + job.ID + "/cancel", "", 200},
		{"adm", "DELETE", "/v1/jobs/" + job.ID, "", 204},
	}
	for _, tt := range tests {
		var header []string
		if tt.token != "" {
			header = bearer(tt.token)
		}
		var body any
		if tt.body != "" {
			body = tt.body
		}
		res := e.do(tt.method, tt.path, body, header...)
		switch tt.status {
		case 401:
			res.problem(401, "unauthorized")
			if !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s: WWW-Authenticate %q", tt.method, tt.path, res.Header.Get("WWW-Authenticate"))
			}
		case 403:
			res.problem(403, "forbidden")
		default:
			if res.Status != tt.status {
				t.Errorf("%s %s as %q: %d, want %d: %s", tt.method, tt.path, tt.token, res.Status, tt.status, res.Body)
			}
		}
	}
}

// TestAuthOnlyBearer: the API takes a token from the Authorization header
// as a bearer token and nowhere else, a dashboard cookie least of all.
func TestAuthOnlyBearer(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens)
	for _, header := range [][]string{
		{"Cookie", "tether_session=adm"},
		{"Authorization", "Basic YWRtOg=="},
		{"Authorization", "adm"},
		{"Authorization", "Bearer "},
	} {
		e.do("GET", "/v1/queues", nil, header...).problem(401, "unauthorized")
	}
	e.do("GET", "/v1/queues?token=adm", nil).problem(401, "unauthorized")
	e.do("GET", "/v1/queues", nil, "Authorization", "bearer adm").want(200)
}

func TestAuthRefusalsLoggedWithoutToken(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	e := setup(t, withTokens, func(c *api.Config) { c.Logger = newTextLogger(&log) })
	e.do("GET", "/v1/queues", nil, bearer("wrong-secret-value")...).want(401)
	e.do("POST", "/v1/queues/q/pause", nil, bearer("work")...).want(403)
	contains(t, log.String(), "code=unauthorized", "code=forbidden", "role=worker", "request_id=")
	if strings.Contains(log.String(), "wrong-secret-value") || strings.Contains(log.String(), "work ") {
		t.Errorf("a token was logged:\n%s", log.String())
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens, func(c *api.Config) {
		c.RateLimits = map[api.Role]api.RateLimit{api.RoleProducer: {PerSecond: 0.5, Burst: 2}}
	})
	prod := bearer("prod")
	e.do("GET", "/v1/stats", nil, prod...).want(200)
	e.do("GET", "/v1/stats", nil, prod...).want(200)
	res := e.do("GET", "/v1/stats", nil, prod...)
	res.problem(429, "rate_limited")
	if got := res.Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2", got)
	}
	// Admin has no limit configured: unlimited.
	for range 10 {
		e.do("GET", "/v1/stats", nil, bearer("adm")...).want(200)
	}
	e.clock.Advance(2 * time.Second)
	e.do("GET", "/v1/stats", nil, prod...).want(200)
	e.do("GET", "/v1/stats", nil, prod...).want(429)
}

func TestParseTokens(t *testing.T) {
	t.Parallel()
	got, err := api.ParseTokens("a:admin, b:c:producer\n# a comment\n\nw1:worker,w2:worker\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Token{{"a", api.RoleAdmin}, {"b:c", api.RoleProducer}, {"w1", api.RoleWorker}, {"w2", api.RoleWorker}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("token %d = %v, want %v", i, got[i], want[i])
		}
	}
	for _, bad := range []struct{ in, want string }{
		{"secretvalue", "token 1: want secret:role"},
		{"a:admin,secretvalue:root", `token 2: role must be admin, producer or worker, not "root"`},
		{":admin", "token 1: the secret must be non-empty"},
		{"a b:admin", "token 1: the secret must be non-empty"},
		{"a:admin,a:worker", "token 2: the same secret is given twice"},
	} {
		_, err := api.ParseTokens(bad.in)
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "secretvalue") {
			t.Errorf("ParseTokens(%q) = %v, want an error with %q and no secret", bad.in, err, bad.want)
		}
	}
}

// TestAuthFailuresThrottled: an address that presents wrong tokens gets
// 429 with Retry-After once over its failures, for any token it did not
// use before (a right one too: a guesser must not tell them apart), while
// tokens that authenticated from it before go on working. Addresses count
// apart (IPv6 by /64), requests without a token are not failures, and the
// allowance comes back with time.
func TestAuthFailuresThrottled(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens, func(c *api.Config) { c.AuthThrottle = api.NewAuthThrottle(3, time.Minute) })
	from := func(addr, token string) *response {
		header := []string{"RemoteAddr", addr}
		if token != "" {
			header = append(header, bearer(token)...)
		}
		return e.do("GET", "/v1/stats", nil, header...)
	}
	const guesser = "198.51.100.7:4000"
	from(guesser, "work").want(http.StatusOK)
	for range 5 {
		from(guesser, "").problem(http.StatusUnauthorized, "unauthorized") // no token: no guess
	}
	for _, wrong := range []string{"guess-1", "guess-2", "guess-3"} {
		from(guesser, wrong).problem(http.StatusUnauthorized, "unauthorized")
	}
	for _, token := range []string{"guess-4", "prod"} {
		res := from(guesser, token)
		res.problem(http.StatusTooManyRequests, "rate_limited")
		if got := res.Header.Get("Retry-After"); got != "20" {
			t.Errorf("%s: Retry-After %q, want 20", token, got)
		}
	}
	from(guesser, "work").want(http.StatusOK)
	from("198.51.100.8:4000", "guess-5").problem(http.StatusUnauthorized, "unauthorized")

	for _, wrong := range []string{"guess-1", "guess-2", "guess-3"} {
		from("[2001:db8:1:2::1]:4000", wrong).want(http.StatusUnauthorized)
	}
	from("[2001:db8:1:2::ffff]:4000", "prod").problem(http.StatusTooManyRequests, "rate_limited")
	from("[2001:db8:1:3::1]:4000", "prod").want(http.StatusOK)

	e.clock.Advance(21 * time.Second) // one failure more
	from(guesser, "guess-6").want(http.StatusUnauthorized)
	from(guesser, "guess-7").want(http.StatusTooManyRequests)
	e.clock.Advance(time.Minute)
	from(guesser, "prod").want(http.StatusOK)
}

// TestUnknownRoutesNeedToken: with tokens, an unknown /v1 route or method,
// or an unknown hook, is 401 to a request without a good token, so that a
// stranger cannot map the routes (or the hook names); any role's token
// gets the 404 or 405. Without tokens they are 404 and 405 to anyone.
func TestUnknownRoutesNeedToken(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens)
	for _, tt := range []struct{ method, path string }{
		{"GET", "/v1/no-such-route"},
		{"POST", "/v1/admin/debug"},
		{"GET", "/v1"},
		{"PUT", "/v1/jobs"},
		{"GET", "/v1/lease"},
		{"POST", "/v1/hooks/no-such-hook"},
	} {
		for _, header := range [][]string{nil, bearer("wrong")} {
			res := e.do(tt.method, tt.path, nil, header...)
			res.problem(http.StatusUnauthorized, "unauthorized")
		}
	}
	e.do("GET", "/v1/no-such-route", nil, bearer("work")...).problem(http.StatusNotFound, "not_found")
	e.do("POST", "/v1/hooks/no-such-hook", nil, bearer("prod")...).problem(http.StatusNotFound, "not_found")
	res := e.do("PUT", "/v1/jobs", nil, bearer("prod")...)
	res.problem(http.StatusMethodNotAllowed, "method_not_allowed")
	if got := res.Header.Get("Allow"); got != "GET, POST" {
		t.Errorf("Allow %q, want GET, POST", got)
	}

	open := setup(t)
	open.do("GET", "/v1/no-such-route", nil).problem(http.StatusNotFound, "not_found")
	open.do("PUT", "/v1/jobs", nil).problem(http.StatusMethodNotAllowed, "method_not_allowed")
}
