package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

// TestStoreUnavailable: on every backend, a store that does not answer
// makes every route that needs it answer 503 unavailable with Retry-After
// (checked against openapi.yaml, as every answer here), never 500, and
// with no host or port of the store in the answer, only in the log. Once
// the store is back, the same server answers again.
func TestStoreUnavailable(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name string
		open func(t *testing.T) *storetest.Outage
	}{
		{"sqlite", sqliteOutage},
		{"postgres", postgresOutage},
		{"redis", redisOutage},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			o := b.open(t)
			var log bytes.Buffer
			e := setup(t, withHooks, withStore(func(store.Store) store.Store { return o.Store }),
				func(c *api.Config) { c.Logger = newTextLogger(&log) })
			j := e.enqueue("q", "k")
			leased := e.lease("w-1", "q")

			o.Cut(t)
			for _, r := range outageRequests(j.ID, leased.Lease.Token) {
				res := e.do(r.method, r.path, r.body, r.header...)
				if r.read && o.ReadsAnswer && res.Status < 300 {
					continue
				}
				p := res.problem(http.StatusServiceUnavailable, "unavailable")
				if got := res.Header.Get("Retry-After"); got != "2" {
					t.Errorf("%s %s: Retry-After %q, want 2", r.method, r.path, got)
				}
				if d, _ := p["detail"].(string); strings.Contains(d, "127.0.0.1") || strings.Contains(d, "dial") {
					t.Errorf("%s %s: the detail shows the store's address: %q", r.method, r.path, d)
				}
			}
			if !strings.Contains(log.String(), "store unavailable") {
				t.Errorf("nothing logged about the outage:\n%s", log.String())
			}

			o.Restore(t)
			for _, r := range []struct{ method, path string }{{"GET", "/readyz"}, {"GET", "/v1/stats"}, {"GET", "/v1/jobs/" + j.ID}} {
				recovered(t, e, r.method, r.path)
			}
			e.enqueue("q", "k")
		})
	}
}

// recovered waits for method path to answer 2xx after a restore; while
// the store's connections come back it may answer 503, never another code.
func recovered(t *testing.T, e *env, method, path string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := e.do(method, path, nil)
		switch {
		case res.Status < 300:
			return
		case res.Status != http.StatusServiceUnavailable:
			t.Fatalf("%s %s after the restore: %d %s", method, path, res.Status, res.Body)
		case time.Now().After(deadline):
			t.Fatalf("%s %s still answers 503 15 s after the restore: %s", method, path, res.Body)
		}
		time.Sleep(10 * time.Millisecond) // polling a server coming back: no signal to wait on
	}
}

type outageRequest struct {
	method, path string
	body         any
	header       []string
	read         bool
}

// outageRequests are one request to every route that needs the store;
// id is a job leased with token.
func outageRequests(id, token string) []outageRequest {
	w := "/v1/workers/w-1"
	spec := map[string]any{"kind": "k", "queue": "q"}
	return []outageRequest{
		{"GET", "/readyz", nil, nil, true}, // SQLite: reads answer, so it is ready
		{"GET", "/v1/jobs/" + id, nil, nil, true},
		{"GET", "/v1/jobs?queue=q", nil, nil, true},
		{"GET", "/v1/queues", nil, nil, true},
		{"GET", "/v1/stats", nil, nil, true},
		{"GET", "/v1/workers", nil, nil, true},
		{"GET", "/v1/nodes", nil, nil, true},
		{"POST", "/v1/jobs", spec, []string{"Idempotency-Key", "k-1"}, false},
		{"POST", "/v1/jobs/batch", map[string]any{"jobs": []any{spec}}, nil, false},
		{"POST", "/v1/lease", map[string]any{"worker_id": "w-2", "queues": []string{"q"}}, nil, false},
		{"POST", "/v1/lease", map[string]any{"worker_id": "w-2", "queues": []string{"q"}, "wait_ms": 30000}, nil, false},
		{"POST", "/v1/jobs/" + id + "/extend", map[string]any{"token": token}, nil, false},
		{"POST", "/v1/jobs/" + id + "/ack", map[string]any{"token": token}, nil, false},
		{"POST", "/v1/jobs/" + id + "/fail", map[string]any{"token": token, "error": "e"}, nil, false},
		{"POST", "/v1/jobs/" + id + "/release", map[string]any{"token": token}, nil, false},
		{"POST", "/v1/settle", map[string]any{"acks": []any{map[string]any{"id": id, "token": token}}}, nil, false},
		{"POST", "/v1/jobs/" + id + "/cancel", nil, nil, false},
		{"POST", "/v1/jobs/" + id + "/retry", nil, nil, false},
		{"POST", "/v1/jobs/" + id + "/run", nil, nil, false},
		{"DELETE", "/v1/jobs/" + id, nil, nil, false},
		{"POST", "/v1/workers", map[string]any{"id": "w-3"}, nil, false},
		{"POST", w + "/heartbeat", map[string]any{}, nil, false},
		{"DELETE", w, nil, nil, false},
		{"POST", "/v1/queues/q/pause", nil, nil, false},
		{"POST", "/v1/queues/q/resume", nil, nil, false},
		{"POST", "/v1/hooks/open", `{"a":1}`, nil, false},
	}
}

func sqliteOutage(t *testing.T) *storetest.Outage {
	path := filepath.Join(t.TempDir(), "tether.db")
	s, err := sqlite.OpenWith(t.Context(), path, sqlite.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var other *sql.Conn
	return &storetest.Outage{
		Store:       s,
		ReadsAnswer: true, // the cut is another program's write lock: WAL readers pass it
		Cut: func(t *testing.T) {
			// Another program on the file, past Tether's own lock file.
			db, err := sql.Open("sqlite3", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if other, err = db.Conn(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			if _, err := other.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
		},
		Restore: func(t *testing.T) {
			if _, err := other.ExecContext(t.Context(), "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// postgresOutage opens a store in a schema of its own on the test
// Postgres, through a proxy the outage cuts: the shared Postgres stays up.
func postgresOutage(t *testing.T) *storetest.Outage {
	u, err := url.Parse(storetest.PostgresSchema(t, "tether_api"))
	if err != nil {
		t.Fatal(err)
	}
	p := storetest.NewProxy(t, u.Host)
	u.Host = p.Addr()
	s, err := postgres.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &storetest.Outage{Store: s, Cut: func(*testing.T) { p.Cut() }, Restore: func(*testing.T) { p.Restore() }}
}

// redisOutage opens a store on a redis-server of the test's own (with an
// AOF, so the jobs outlive the kill), which the outage kills.
func redisOutage(t *testing.T) *storetest.Outage {
	srv := storetest.StartRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	s, err := redis.Open(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &storetest.Outage{Store: s, Cut: func(*testing.T) { srv.Kill9() }, Restore: func(*testing.T) { srv.Start() }}
}
