package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/storetest"
)

// The tests run against the database named by TETHER_TEST_POSTGRES_URL
// (scripts/postgres.sh prints it). Without it they skip, except on CI,
// where a missing Postgres fails the run.
const urlEnv = "TETHER_TEST_POSTGRES_URL"

var admin struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
}

// baseURL returns the test database URL, skipping (or failing on CI) when
// there is none.
func baseURL(t testing.TB) string {
	t.Helper()
	return storetest.EnvURL(t, urlEnv, "scripts/postgres.sh")
}

// adminPool is a small pool on the test database for creating and dropping
// schemas.
func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := baseURL(t)
	admin.once.Do(func() {
		admin.pool, admin.err = pgxpool.New(context.Background(), u)
	})
	if admin.err != nil {
		t.Fatalf("connect to %s: %v", urlEnv, admin.err)
	}
	return admin.pool
}

// newSchema creates an empty schema that t's cleanup drops, and returns a
// URL whose connections work in it.
func newSchema(t testing.TB) string {
	t.Helper()
	pool := adminPool(t)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "tether_test_" + hex.EncodeToString(b)
	if _, err := pool.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(t, baseURL(t), schema)
}

func withSearchPath(t testing.TB, raw, schema string) string {
	t.Helper()
	if !strings.Contains(raw, "://") {
		return raw + " search_path=" + schema
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %s: %v", urlEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// openURL opens a store on url, closed by t's cleanup.
func openURL(t testing.TB, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// open returns a store on a fresh schema.
func open(t testing.TB) *postgres.Store {
	t.Helper()
	return openURL(t, newSchema(t))
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

// parallelDB is how many tests run at once unless -parallel says otherwise.
// They wait on the database far more than they use a CPU, so the default
// (GOMAXPROCS, 2 on the reference machine) would leave both idle. Four
// stay well inside max_connections next to other packages' tests.
const parallelDB = "4"

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", parallelDB)
	}
	code := m.Run()
	if admin.pool != nil {
		admin.pool.Close()
	}
	os.Exit(code)
}
