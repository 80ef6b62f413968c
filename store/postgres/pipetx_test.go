package postgres_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store/postgres"
)

// A transaction whose batch failed, or that returned without its commit,
// is rolled back and its connection goes back to the pool in working
// order: with one connection in the pool, the next transaction runs on the
// same backend and sees nothing of the failed ones.
func TestPipeTxRollsBackWhatItLeftOpen(t *testing.T) {
	t.Parallel()
	s := openURL(t, newSchema(t)+"&pool_max_conns=1")
	ctx := t.Context()
	if err := s.ExecForTest(ctx, `CREATE TABLE piped (n int)`); err != nil {
		t.Fatal(err)
	}
	var pid uint32
	if err := s.PipeTxForTest(ctx, func(conn *pgx.Conn) error {
		pid = conn.PgConn().PID()
		b := &pgx.Batch{}
		b.Queue(`begin`)
		b.Queue(`INSERT INTO piped VALUES (1)`)
		b.Queue(`SELECT 1 / 0`)
		b.Queue(`commit`)
		return conn.SendBatch(ctx, b).Close()
	}); err == nil {
		t.Fatal("a failing batch reported no error")
	}
	err := s.PipeTxForTest(ctx, func(conn *pgx.Conn) error {
		if conn.PgConn().PID() != pid {
			t.Errorf("the connection was replaced, not rolled back")
		}
		b := &pgx.Batch{}
		b.Queue(`begin`)
		b.Queue(`INSERT INTO piped VALUES (2)`)
		return conn.SendBatch(ctx, b).Close()
	})
	if !errors.Is(err, postgres.ErrLeftOpen) {
		t.Fatalf("a transaction without its commit: %v, want ErrLeftOpen", err)
	}
	if err := s.PipeTxForTest(ctx, func(conn *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue(`begin`)
		b.Queue(`INSERT INTO piped VALUES (3)`)
		b.Queue(`commit`)
		return conn.SendBatch(ctx, b).Close()
	}); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s.QueryRowForTest(ctx, `SELECT coalesce(sum(n), 0) FROM piped`, &rows); err != nil {
		t.Fatal(err)
	}
	if rows != 3 {
		t.Errorf("committed rows sum to %d, want 3 (only the committed transaction's)", rows)
	}
}
