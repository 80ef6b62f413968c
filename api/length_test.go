package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Answers built whole declare their length, so net/http sends them
// unchunked however large: a batch of jobs and a lease (many kilobytes,
// past its chunking threshold) and a problem.
func TestAnswersDeclareTheirLength(t *testing.T) {
	e := setup(t)
	batch := `{"jobs":[` + strings.TrimSuffix(strings.Repeat(`{"kind":"k","payload":{"pad":"`+strings.Repeat("x", 200)+`"}},`, 50), ",") + `]}`
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/jobs/batch", batch, http.StatusCreated},
		{"GET", "/v1/jobs/01950000-0000-7000-8000-000000000000", "", http.StatusNotFound},
		{"POST", "/v1/lease", `{"worker_id":"w","queues":["default"],"max":50}`, http.StatusOK},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		res := e.do(c.method, c.path, body)
		if res.Status != c.status {
			t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, res.Status, res.Body, c.status)
		}
		if got := res.Header.Get("Content-Length"); got != strconv.Itoa(len(res.Body)) {
			t.Errorf("%s %s: Content-Length %q for a body of %d bytes", c.method, c.path, got, len(res.Body))
		}
		if c.path == "/v1/lease" && len(res.Body) < 10000 {
			t.Errorf("the lease answered %d bytes, want 50 jobs' worth", len(res.Body))
		}
	}
}
