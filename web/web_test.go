package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tetherq/tether/web"
)

func TestPlaceholder(t *testing.T) {
	t.Parallel()
	h := web.New(web.Config{NodeID: "n<1>", Version: "v1"})
	tests := []struct {
		method, path string
		status       int
		contains     string // in the body
	}{
		{"GET", "/", 200, "Tether — dashboard coming soon"},
		{"GET", "/", 200, `<a href="/v1/queues">`},
		{"GET", "/", 200, "node n&lt;1&gt;, version v1"},
		{"GET", "/nope", 404, ""},
		{"POST", "/", 405, ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.contains) {
			t.Errorf("%s %s = %d %q, want %d containing %q", tt.method, tt.path, rec.Code, rec.Body, tt.status, tt.contains)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
}
