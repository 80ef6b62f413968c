package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherq/tether"
	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

// t0 is the test clock's start: a fixed instant with a millisecond part.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)

// clock is the injected Config.Now, moved by tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one API over a fresh SQLite file.
type env struct {
	t        *testing.T
	api      *api.API
	handler  http.Handler
	store    *sqlite.Store
	clock    *clock
	shutdown chan struct{}
}

// option adjusts the Config of setup, or wraps its store.
type option func(*api.Config)

func withMaxBody(n int64) option { return func(c *api.Config) { c.MaxBody = n } }

func withStore(wrap func(store.Store) store.Store) option {
	return func(c *api.Config) { c.Store = wrap(c.Store) }
}

// setup opens a store in t's temp dir and builds the API over it with a
// test clock and a registry of its own.
func setup(t *testing.T, opts ...option) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := &env{t: t, store: st, clock: &clock{now: t0}, shutdown: make(chan struct{})}
	cfg := api.Config{
		Store: st, Now: e.clock.Now, NodeID: "node-1", Version: "test",
		Registerer: prometheus.NewRegistry(), Shutdown: e.shutdown,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if e.api, err = api.New(cfg); err != nil {
		t.Fatalf("api.New: %v", err)
	}
	e.handler = e.api.Handler()
	return e
}

// spec is openapi.yaml, loaded and validated once.
var spec = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(tether.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

// specContract is openapi.yaml's schemas, every one compiled by a standard
// JSON Schema validator; one that does not compile fails every API test.
var specContract = sync.OnceValues(func() (*contract, error) { return compileContract(tether.OpenAPI) })

var specRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := spec()
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// response is a recorded answer.
type response struct {
	t      *testing.T
	Status int
	Header http.Header
	Body   []byte
}

// do serves method path with body (a string or []byte sent as is, anything
// else marshalled) and header pairs, and checks the exchange against
// openapi.yaml: the response always, the request whenever the server
// accepted it (a request the server refused may break the spec too).
// A header pair with an empty value removes that header; "Host" sets the
// request's Host, "RemoteAddr" its client address.
func (e *env) do(method, path string, body any, header ...string) *response {
	e.t.Helper()
	raw := encodeBody(e.t, body)
	req := httptest.NewRequestWithContext(e.t.Context(), method, path, bytes.NewReader(raw))
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		switch {
		case header[i] == "Host":
			req.Host = header[i+1]
		case header[i] == "RemoteAddr":
			req.RemoteAddr = header[i+1]
		case header[i+1] == "":
			req.Header.Del(header[i])
		default:
			req.Header.Set(header[i], header[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, cloneRequest(req, raw))
	res := &response{t: e.t, Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	check := cloneRequest(req, raw)
	if raw != nil && check.Header.Get("Content-Type") == "" {
		// API.md takes a body without Content-Type as JSON; OpenAPI cannot
		// say so, so the spec check sees what the server assumed.
		check.Header.Set("Content-Type", "application/json")
	}
	checkExchange(e.t, check, raw, res)
	return res
}

func encodeBody(t *testing.T, body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case []byte:
		return b
	case string:
		return []byte(b)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Errorf("marshal request body: %v", err)
	}
	return raw
}

func cloneRequest(req *http.Request, body []byte) *http.Request {
	c := req.Clone(req.Context())
	c.Body = io.NopCloser(bytes.NewReader(body))
	if body == nil {
		c.Body = http.NoBody
	}
	return c
}

// checkExchange validates req (sent with body) and res against the spec.
// Unknown routes and methods must answer a problem; known ones must match
// their operation. kin-openapi checks the route, parameters, headers and
// status; the contract checks both bodies (see contract for why).
func checkExchange(t *testing.T, req *http.Request, body []byte, res *response) {
	t.Helper()
	if _, err := spec(); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	k, err := specContract()
	if err != nil {
		t.Fatalf("openapi.yaml has schemas a standard validator cannot compile:\n%v", err)
	}
	router, err := specRouter()
	if err != nil {
		t.Fatalf("openapi router: %v", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		// 401 and 429: the server has tokens and the request no good one.
		switch res.Status {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized, http.StatusTooManyRequests:
		default:
			t.Errorf("%s %s: not in openapi.yaml, answered %d", req.Method, req.URL, res.Status)
		}
		if err := k.checkProblem(res.Header.Get("Content-Type"), res.Body); err != nil {
			t.Errorf("%s %s: problem breaks openapi.yaml: %v", req.Method, req.URL, err)
		}
		return
	}
	// The spec's security schemes document the bearer token; whether a
	// token is right is the server's answer, which the response check sees.
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		ExcludeRequestBody: true, ExcludeResponseBody: true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	op := operation(route.Path, route.Method)
	reqErr := errors.Join(openapi3filter.ValidateRequest(context.Background(), in),
		k.checkRequestBody(op, req.Header.Get("Content-Type"), body))
	if reqErr != nil && res.Status < 400 {
		t.Errorf("%s %s answered %d, but the request breaks openapi.yaml: %v", req.Method, req.URL, res.Status, reqErr)
	}
	err = errors.Join(openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.Status, Header: res.Header,
		Body: io.NopCloser(bytes.NewReader(res.Body)), Options: opts,
	}), k.checkResponseBody(op, res.Status, res.Header.Get("Content-Type"), res.Body))
	if err != nil {
		t.Errorf("%s %s: response %d breaks openapi.yaml: %v\n%s", req.Method, req.URL, res.Status, err, res.Body)
	}
	if op != operation("/v1/lease", "POST") && leaseTokenIn(res.Body) {
		t.Errorf("%s %s: a lease token outside a lease answer: %s", req.Method, req.URL, res.Body)
	}
}

// leaseTokenIn reports whether a JSON body holds a lease with its token
// anywhere ({"lease": {"token": ...}}), which only a lease answer may.
func leaseTokenIn(body []byte) bool {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch n := v.(type) {
		case map[string]any:
			if l, ok := n["lease"].(map[string]any); ok && l["token"] != nil {
				return true
			}
			for _, c := range n {
				if walk(c) {
					return true
				}
			}
		case []any:
			for _, c := range n {
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// into decodes the body into v.
func (r *response) into(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		r.t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// object decodes the body as a JSON object.
func (r *response) object() map[string]any {
	r.t.Helper()
	var m map[string]any
	r.into(&m)
	return m
}

// want fails the test unless the status is status.
func (r *response) want(status int) *response {
	r.t.Helper()
	if r.Status != status {
		r.t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

// problem checks a problem+json answer with status and code and returns it.
func (r *response) problem(status int, code string) map[string]any {
	r.t.Helper()
	r.want(status)
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		r.t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	p := r.object()
	if p["code"] != code || p["type"] != "urn:tether:error:"+code || p["status"] != float64(status) {
		r.t.Errorf("problem %v, want code %s status %d", p, code, status)
	}
	return p
}

// field checks an invalid_request naming field.
func (r *response) field(field string) {
	r.t.Helper()
	p := r.problem(http.StatusBadRequest, "invalid_request")
	if got, _ := p["field"].(string); got != field {
		r.t.Errorf("field %v, want %q (%v)", p["field"], field, p["detail"])
	}
}

// job is the parts of a wire job the tests read.
type job struct {
	ID              string          `json:"id"`
	Queue           string          `json:"queue"`
	Kind            string          `json:"kind"`
	Payload         json.RawMessage `json:"payload"`
	State           string          `json:"state"`
	Attempt         int             `json:"attempt"`
	RunAt           string          `json:"run_at"`
	LastError       *string         `json:"last_error"`
	Result          json.RawMessage `json:"result"`
	Progress        *int            `json:"progress"`
	CancelRequested bool            `json:"cancel_requested"`
	DeadReason      *string         `json:"dead_reason"`
	Lease           *struct {
		WorkerID  string `json:"worker_id"`
		Token     string `json:"token"`
		ExpiresAt string `json:"expires_at"`
	} `json:"lease"`
	Attempts []struct {
		Attempt  int    `json:"attempt"`
		WorkerID string `json:"worker_id"`
		Outcome  string `json:"outcome"`
	} `json:"attempts"`
}

func (r *response) job() job {
	r.t.Helper()
	var j job
	r.into(&j)
	return j
}

// enqueue creates a job of kind in queue and returns it.
func (e *env) enqueue(queue, kind string) job {
	e.t.Helper()
	return e.do("POST", "/v1/jobs", map[string]any{"queue": queue, "kind": kind}).want(201).job()
}

// lease leases one job of queue for worker, which must get one.
func (e *env) lease(worker, queue string) job {
	e.t.Helper()
	var out struct{ Jobs []job }
	e.do("POST", "/v1/lease", map[string]any{"worker_id": worker, "queues": []string{queue}}).want(200).into(&out)
	if len(out.Jobs) != 1 {
		e.t.Fatalf("leased %d jobs, want 1", len(out.Jobs))
	}
	return out.Jobs[0]
}

// promote makes due scheduled jobs leasable, as the scheduler would.
func (e *env) promote() {
	e.t.Helper()
	if _, err := e.store.JobPromote(e.t.Context(), &store.JobPromoteParams{Limit: 1000, Now: e.clock.Now()}); err != nil {
		e.t.Fatalf("promote: %v", err)
	}
}

// newTextLogger logs to w.
func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// ms formats t as the wire does.
func ms(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// contains fails the test unless s holds every part.
func contains(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("missing %q in:\n%s", p, s)
		}
	}
}
