package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tetherq/tether/migrations"
	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

// A store written before successes stopped writing history rows (version
// 11) upgrades without showing a success twice: 00012 drops the rows whose
// job holds that success itself, and keeps the rest.
func TestUpgradeDropsSuccessRowsTheJobHolds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tether.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.MigrateTo(t, db, goose.DialectSQLite3, migrations.SQLiteDir(), 11)
	job, failed, success := storetest.UpgradeJob, storetest.UpgradeFailed, storetest.UpgradeSuccess
	t0 := storetest.UpgradeStart
	ms := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
	if _, err := db.ExecContext(ctx, `INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts,
			timeout_ms, backoff_base_ms, backoff_max_ms, run_at, created_at, started_at, finished_at,
			worker_id, token, attempt_id)
		VALUES (?, 'q', 'k', 'succeeded', 0, 2, 5, 1000, 1000, 1000, ?, ?, ?, ?, 'w2', 'tok', ?)`,
		job, ms(0), ms(0), ms(2*time.Second), ms(3*time.Second), success); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome, error)
		VALUES (?, ?, 1, 'w1', ?, ?, 'failed', 'boom'), (?, ?, 2, 'w2', ?, ?, 'succeeded', NULL)`,
		failed, job, ms(0), ms(time.Second), success, job, ms(2*time.Second), ms(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := sqlite.Open(ctx, path) // migrates to the newest
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.SuccessHistory(t, s)
}
