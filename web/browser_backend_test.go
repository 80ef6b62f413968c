package web_test

// The stores the browser tests run the dashboard on: a SQLite file, a
// schema of its own on the test Postgres, a key prefix of its own on the
// test redis-server.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

// backendStore is a store with the dashboard's own reads, as every backend
// has.
type backendStore interface {
	store.Store
	store.Insights
}

// backend opens an empty store of one kind, closed (and its schema or keys
// dropped) when the test ends.
type backend struct {
	name string
	open func(t *testing.T) backendStore
	// layout: the pages' layout is checked on this backend. It depends on
	// the stylesheet, not the store, so one backend is enough.
	layout bool
}

var backends = []backend{
	{name: "sqlite", open: openSQLiteBackend, layout: true},
	{name: "postgres", open: openPostgresBackend},
	{name: "redis", open: openRedisBackend},
}

func openSQLiteBackend(t *testing.T) backendStore {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openPostgresBackend opens a store in a fresh schema of the database
// named by TETHER_TEST_POSTGRES_URL.
func openPostgresBackend(t *testing.T) backendStore {
	t.Helper()
	url := storetest.PostgresSchema(t, "tether_web")
	// The store outlives t.Context(), which ends before the cleanups run.
	st, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open Postgres store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openRedisBackend opens a store under a fresh key prefix on the
// redis-server named by TETHER_TEST_REDIS_URL.
func openRedisBackend(t *testing.T) backendStore {
	t.Helper()
	raw := storetest.EnvURL(t, "TETHER_TEST_REDIS_URL", "scripts/redis.sh")
	prefix := "tether-web:" + randomHex(6) + ":"
	t.Cleanup(func() { dropKeys(t, raw, prefix) })
	st, err := redis.Open(context.Background(), raw, redis.WithPrefix(prefix))
	if err != nil {
		t.Fatalf("open Redis store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// dropKeys deletes every key under prefix (which holds no glob
// characters).
func dropKeys(t *testing.T, raw, prefix string) {
	o, err := goredis.ParseURL(raw)
	if err != nil {
		t.Errorf("parse TETHER_TEST_REDIS_URL: %v", err)
		return
	}
	c := goredis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var keys []string
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Errorf("list keys under %s: %v", prefix, err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := c.Unlink(ctx, keys[:n]...).Err(); err != nil {
			t.Errorf("drop keys under %s: %v", prefix, err)
			return
		}
		keys = keys[n:]
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
