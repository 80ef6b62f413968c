package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

// TestOutage: another program holding the file's write lock past the busy
// timeout makes writes fail with store.ErrUnavailable (reads go on, as WAL
// allows), and the store writes again once the lock is released.
func TestOutage(t *testing.T) {
	t.Parallel()
	storetest.RunOutage(t, func(t *testing.T) *storetest.Outage {
		path := filepath.Join(t.TempDir(), "tether.db")
		s, err := sqlite.OpenWith(t.Context(), path, sqlite.Options{BusyTimeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		var other *sql.Conn
		return &storetest.Outage{
			Store:       s,
			ReadsAnswer: true,
			Cut:         func(t *testing.T) { other = holdWriteLock(t, path) },
			Restore: func(t *testing.T) {
				if _, err := other.ExecContext(context.Background(), "ROLLBACK"); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

// holdWriteLock opens path as another program would, past the Store's own
// lock file (which only Tether heeds), and takes SQLite's write lock.
func holdWriteLock(t *testing.T, path string) *sql.Conn {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return conn
}
