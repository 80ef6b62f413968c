package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresSchema creates an empty schema named prefix_<random> in the test
// database (TETHER_TEST_POSTGRES_URL, as scripts/postgres.sh exports it),
// drops it when t ends, and returns the database's URL with that schema
// first on its search path: a store opened on it is alone, however many
// tests share the database. Without the variable the test stops by
// Unavailable.
func PostgresSchema(t testing.TB, prefix string) string {
	t.Helper()
	raw := EnvURL(t, "TETHER_TEST_POSTGRES_URL", "scripts/postgres.sh")
	conn, err := pgx.Connect(t.Context(), raw)
	if err != nil {
		t.Fatalf("connect to Postgres: %v", err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := prefix + "_" + hex.EncodeToString(b)
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		conn.Close(context.Background())
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		// t.Context() has ended by the time cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		conn.Close(ctx)
	})
	return WithSearchPath(t, raw, schema)
}

// WithSearchPath puts schema first on the search path of raw, a URL or a
// key=value DSN.
func WithSearchPath(t testing.TB, raw, schema string) string {
	t.Helper()
	if !strings.Contains(raw, "://") {
		return raw + " search_path=" + schema
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse the Postgres URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
