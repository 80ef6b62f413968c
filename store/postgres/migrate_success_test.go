package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/tetherq/tether/migrations"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// A store written before successes stopped writing history rows (version
// 11) upgrades without showing or counting a success twice: 00012 drops
// the rows whose job holds that success itself, and keeps the rest.
func TestUpgradeDropsSuccessRowsTheJobHolds(t *testing.T) {
	ctx := context.Background()
	url := newSchema(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.MigrateTo(t, db, goose.DialectPostgres, migrations.PostgresDir(), 11)
	job, failed, success := storetest.UpgradeJob, storetest.UpgradeFailed, storetest.UpgradeSuccess
	t0 := storetest.UpgradeStart
	if _, err := db.ExecContext(ctx, `INSERT INTO jobs (id, queue, kind, state, priority, attempt, max_attempts,
			timeout_ms, backoff_base_ms, backoff_max_ms, run_at, created_at, started_at, finished_at,
			worker_id, token, attempt_id)
		VALUES ($1, 'q', 'k', 'succeeded', 0, 2, 5, 1000, 1000, 1000, $2, $2, $3, $4, 'w2', 'tok', $5)`,
		job, t0, t0.Add(2*time.Second), t0.Add(3*time.Second), success); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome, error)
		VALUES ($1, $3, 1, 'w1', $4, $5, 'failed', 'boom'), ($2, $3, 2, 'w2', $6, $7, 'succeeded', NULL)`,
		failed, success, job, t0, t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}

	s := openURL(t, url) // migrates to the newest
	storetest.SuccessHistory(t, s)
	minutes, err := s.ThroughputList(ctx, &store.ThroughputListParams{From: t0, To: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	var succeeded, failedN int64
	for _, m := range minutes {
		succeeded, failedN = succeeded+m.Succeeded, failedN+m.Failed
	}
	if succeeded != 1 || failedN != 1 {
		t.Errorf("throughput after the upgrade: %d succeeded, %d failed, want 1 and 1", succeeded, failedN)
	}
}
