package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Answers built whole declare their length, so they go out unchunked
// however large: a batch of jobs (many kilobytes, past net/http's
// chunking threshold) and a problem.
func TestAnswersDeclareTheirLength(t *testing.T) {
	e := setup(t)
	srv := httptest.NewServer(e.handler)
	defer srv.Close()
	batch := `{"jobs":[` + strings.TrimSuffix(strings.Repeat(`{"kind":"k","payload":{"pad":"`+strings.Repeat("x", 200)+`"}},`, 50), ",") + `]}`
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/jobs/batch", batch, http.StatusCreated},
		{"GET", "/v1/jobs/01950000-0000-7000-8000-000000000000", "", http.StatusNotFound},
		{"POST", "/v1/lease", `{"worker_id":"w","queues":["default"],"max":50}`, http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(t.Context(), c.method, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != c.status {
			t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, resp.StatusCode, body, c.status)
		}
		if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) > 0 {
			t.Errorf("%s %s: Content-Length %d, Transfer-Encoding %v, for a body of %d bytes",
				c.method, c.path, resp.ContentLength, resp.TransferEncoding, len(body))
		}
		if c.path == "/v1/lease" && len(body) < 10000 {
			t.Errorf("the lease answered %d bytes, want 50 jobs' worth", len(body))
		}
	}
}
