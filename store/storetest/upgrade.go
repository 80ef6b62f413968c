package storetest

import (
	"context"
	"database/sql"
	"io/fs"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/tetherq/tether/store"
)

// The job an upgrade test writes in the old layout (SuccessHistory): two
// attempts, a failure then a success, each with a history row, as the SQL
// stores wrote them before a success stopped writing one.
const (
	UpgradeJob     = "0190a000-0000-7000-8000-000000000001"
	UpgradeFailed  = "0190a000-0000-7000-8000-0000000000a1"
	UpgradeSuccess = "0190a000-0000-7000-8000-0000000000a2"
)

// UpgradeStart is when UpgradeJob was created; the failure ran from it for
// a second, the success from 2 s to 3 s after it, by workers w1 and w2.
var UpgradeStart = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// SuccessHistory checks UpgradeJob after an upgrade of a store that held
// it in the old layout: the failure and the success once each, the success
// as the job row holds it.
func SuccessHistory(t *testing.T, s store.Store) {
	t.Helper()
	j, err := s.JobGet(context.Background(), &store.JobGetParams{ID: UpgradeJob})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Attempts) != 2 {
		t.Fatalf("attempts after the upgrade: %+v, want the failure and the success once each", j.Attempts)
	}
	if a := j.Attempts[0]; a.ID != UpgradeFailed || a.Outcome != store.OutcomeFailed || a.Error == nil || *a.Error != "boom" {
		t.Errorf("first attempt %+v, want the failure kept", a)
	}
	t0 := UpgradeStart
	a := j.Attempts[1]
	if a.ID != UpgradeSuccess || a.Outcome != store.OutcomeSucceeded || a.WorkerID != "w2" || a.Attempt != 2 ||
		!a.StartedAt.Equal(t0.Add(2*time.Second)) || a.FinishedAt == nil || !a.FinishedAt.Equal(t0.Add(3*time.Second)) {
		t.Errorf("second attempt %+v, want the success as the job row holds it", a)
	}
}

// MigrateTo applies the migrations of dir to db up to version, as a store
// of that version left its database.
func MigrateTo(t *testing.T, db *sql.DB, dialect goose.Dialect, dir fs.FS, version int64) {
	t.Helper()
	p, err := goose.NewProvider(dialect, db, dir, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
}
