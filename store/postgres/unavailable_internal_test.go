package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestDown: Postgres's errors that mean "not now" count as down; errors
// that are answers do not.
func TestDown(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("lease: %w", &pgconn.PgError{Code: code}) }
	tests := []struct {
		err  error
		down bool
	}{
		{pg("57P01"), true}, // admin_shutdown
		{pg("57P02"), true}, // crash_shutdown
		{pg("57P03"), true}, // cannot_connect_now: starting up
		{pg("57014"), true}, // query_canceled: statement_timeout
		{pg("53300"), true}, // too_many_connections
		{pg("53100"), true}, // disk_full
		{pg("08006"), true}, // connection_failure
		{pg("58030"), true}, // io_error
		{pg("25006"), true}, // read_only_sql_transaction: a standby
		{&pgconn.ConnectError{Config: &pgconn.Config{}}, true},
		{pg("23505"), false}, // unique_violation
		{pg("42601"), false}, // syntax_error
		{pg("40P01"), false}, // deadlock_detected: retried in tx, then an error of its own
		{pg("28P01"), false}, // invalid_password
		{pgx.ErrNoRows, false},
		{errors.New("decode job: bad"), false},
	}
	for _, tt := range tests {
		if got := down(tt.err); got != tt.down {
			t.Errorf("down(%v) = %v, want %v", tt.err, got, tt.down)
		}
	}
}
