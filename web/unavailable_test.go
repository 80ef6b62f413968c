package web_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
	"github.com/tetherq/tether/web"
)

// TestStoreUnavailablePage: with its redis-server killed, the dashboard's
// pages and panels answer 503 with Retry-After and say in words that the
// store does not answer; started again, the same dashboard answers 200.
func TestStoreUnavailablePage(t *testing.T) {
	t.Parallel()
	srv := storetest.StartRedis(t)
	st, err := redis.Open(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var log bytes.Buffer
	h, err := web.New(web.Config{Store: st, Insights: st, Now: time.Now, NodeID: "node-1", Version: "v-test",
		HeartbeatInterval: 5 * time.Second, DeadAfter: 15 * time.Second, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	paths := []string{"/", "/queues", "/workers", "/nodes", "/orphans", "/retries", "/dead", "/jobs", "/?fragment=throughput"}
	for _, p := range paths {
		if rec := get(p); rec.Code != http.StatusOK {
			t.Fatalf("GET %s before the outage: %d", p, rec.Code)
		}
	}

	srv.Kill9()
	for _, p := range paths {
		rec := get(p)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "2" ||
			!strings.Contains(rec.Body.String(), "The store does not answer") {
			t.Errorf("GET %s with the store down: %d, Retry-After %q:\n%s", p, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	if !strings.Contains(log.String(), "store unavailable") {
		t.Errorf("the outage is not in the log:\n%s", log.String())
	}

	srv.Start()
	deadline := time.Now().Add(15 * time.Second)
	for _, p := range paths {
		for rec := get(p); rec.Code != http.StatusOK; rec = get(p) {
			if rec.Code != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("GET %s after the restart: %d", p, rec.Code)
			}
			time.Sleep(10 * time.Millisecond) // polling a server coming back: no signal to wait on
		}
	}
}
