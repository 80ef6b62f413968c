package api_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherq/tether"
	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
)

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.do("GET", "/v1/nope", nil).problem(http.StatusNotFound, "not_found")
	e.do("GET", "/nope", nil).problem(http.StatusNotFound, "not_found")
	res := e.do("PUT", "/v1/jobs", `{}`)
	res.problem(http.StatusMethodNotAllowed, "method_not_allowed")
	if allow := res.Header.Get("Allow"); allow != "GET, POST" {
		t.Errorf("Allow %q", allow)
	}
	res = e.do("POST", "/healthz", nil)
	res.problem(http.StatusMethodNotAllowed, "method_not_allowed")
	if allow := res.Header.Get("Allow"); allow != "GET" {
		t.Errorf("Allow %q", allow)
	}
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	e := setup(t, withMaxBody(64))
	big := `{"kind":"k","payload":"` + strings.Repeat("x", 100) + `"}`
	// Declared length over the limit: refused before reading.
	e.do("POST", "/v1/jobs", big).problem(http.StatusRequestEntityTooLarge, "payload_too_large")

	// Unknown length (chunked): refused once the limit is crossed.
	body := &countingReader{r: strings.NewReader(big + strings.Repeat(" ", 1<<20))}
	req := httptest.NewRequestWithContext(t.Context(), "POST", "/v1/jobs", body)
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "payload_too_large") {
		t.Errorf("chunked: %d %s", rec.Code, rec.Body)
	}
	if body.n > 64<<10 {
		t.Errorf("read %d bytes of an oversized body", body.n)
	}
	e.do("POST", "/v1/jobs", `{"kind":"k"}`).want(http.StatusCreated)
}

type countingReader struct {
	r *strings.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.do("GET", "/healthz", nil).want(http.StatusOK)
	e.do("GET", "/readyz", nil).want(http.StatusOK)
	down := setup(t, withStore(func(s store.Store) store.Store { return failingPing{s} }))
	down.do("GET", "/readyz", nil).problem(http.StatusServiceUnavailable, "unavailable")
}

type failingPing struct{ store.Store }

func (failingPing) Ping(context.Context) error { return errors.New("down") }

func TestInternalErrorIsLoggedNotShown(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	e := setup(t, withStore(func(s store.Store) store.Store { return failingList{s} }), func(c *api.Config) {
		c.Logger = newTextLogger(&log)
	})
	p := e.do("GET", "/v1/queues", nil).problem(http.StatusInternalServerError, "internal")
	if strings.Contains(p["detail"].(string), "secret") || !strings.Contains(log.String(), "secret") {
		t.Errorf("detail %q, log %q", p["detail"], log.String())
	}
}

type failingList struct{ store.Store }

func (failingList) QueueList(context.Context, *store.QueueListParams) ([]*store.Queue, error) {
	return nil, errors.New("secret disk failure")
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do("GET", "/openapi.yaml", nil).want(http.StatusOK)
	if !bytes.Equal(res.Body, tether.OpenAPI) || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/yaml") {
		t.Errorf("spec served as %q", res.Header.Get("Content-Type"))
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := setup(t)
	j := e.enqueue("q", "k")
	tok := e.lease("w", "q").Lease.Token
	e.do("POST", "/v1/jobs/"+j.ID+"/ack", map[string]any{"token": tok}).want(http.StatusOK)
	e.do("GET", "/v1/jobs/missing", nil).want(http.StatusNotFound)
	body := string(e.do("GET", "/metrics", nil).want(http.StatusOK).Body)
	contains(t, body,
		"tether_jobs_enqueued_total 1\n",
		"tether_jobs_leased_total 1\n",
		`tether_jobs_settled_total{outcome="succeeded"} 1`+"\n",
		`tether_jobs_settled_total{outcome="failed"} 0`+"\n",
		`tether_queue_jobs{queue="q",state="succeeded"} 1`+"\n",
		`tether_queue_jobs{queue="q",state="available"} 0`+"\n",
		`tether_workers{state="live"} 1`+"\n",
		`tether_http_request_duration_seconds_count{code="201",method="POST",route="/v1/jobs"} 1`+"\n",
		`tether_http_request_duration_seconds_count{code="404",method="GET",route="/v1/jobs/{id}"} 1`+"\n",
	)
}

func TestNewConfig(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := api.New(api.Config{}); err == nil {
		t.Error("New without a store succeeded")
	}
	reg := prometheus.NewRegistry()
	if _, err := api.New(api.Config{Store: e.store, Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.New(api.Config{Store: e.store, Registerer: reg}); err == nil {
		t.Error("registering the metrics twice succeeded")
	}
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"x": "y"}, reg)
	if _, err := api.New(api.Config{Store: e.store, Registerer: wrapped}); err == nil {
		t.Error("a Registerer that is no Registry without a Gatherer was accepted")
	}
	if _, err := api.New(api.Config{Store: e.store}); err != nil {
		t.Errorf("New with a private registry: %v", err)
	}
}
