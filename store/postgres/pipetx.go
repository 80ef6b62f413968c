package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// pipeTx runs fn in a transaction that fn opens and closes itself: its
// first batch queues the begin before its first statements, its last
// batch queues the commit after its last. A transaction of two batches
// then costs two round trips, where pgx's Begin and Commit would add one
// each (the limited lease holds its queue's row lock across all of them).
//
// Whatever fn leaves open, by an error before its commit ran or by
// returning without one, is rolled back here; a connection that cannot be
// rolled back is left outside a transaction's idle state, so the pool
// closes it on release instead of handing it out. The whole of it is
// retried, as tx retries, when Postgres aborted it to break a deadlock.
func (s *Store) pipeTx(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	var err error
	for range maxTries {
		err = s.pipeTxOnce(ctx, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

// errLeftOpen is a pipeTx whose fn returned without committing.
var errLeftOpen = errors.New("transaction left open")

func (s *Store) pipeTxOnce(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return mark(ctx, fmt.Errorf("acquire a connection: %w", err))
	}
	defer c.Release()
	err = fn(c.Conn())
	if c.Conn().PgConn().TxStatus() != 'I' && !c.Conn().IsClosed() {
		if err == nil {
			err = errLeftOpen
		}
		_, _ = c.Conn().Exec(ctx, "rollback") // failing, it leaves the status for Release to see
	}
	return mark(ctx, err)
}
