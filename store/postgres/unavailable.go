package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherq/tether/store"
)

// db is a pool whose every failure, however it surfaces (the call, its
// rows, its row, its batch, its transaction), is marked
// store.ErrUnavailable when Postgres did not answer (see down): the one
// place this backend translates pgx's failures. The Store's statements all
// go through a db.
type db struct{ *pgxpool.Pool }

// mark is store.Unavailable with this backend's signs of a store down.
func mark(ctx context.Context, err error) error { return store.Unavailable(ctx, err, down) }

// down reports Postgres's and pgx's own signs of a server that cannot
// answer now: a failed connection attempt, a pgx timeout, a failure before
// anything was sent, or a server error of class 08 (connection exception),
// 53 (insufficient resources: too many connections, disk or memory full),
// 58 (system error: I/O), an administrator's or a crash's shutdown, a
// server still starting, a statement timeout, or a read-only server (a
// standby mid-failover). Any other server error is an answer, however
// unwelcome: a wrong password, a constraint, a syntax error.
func down(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "57014", "25006":
			return true
		}
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "53") || strings.HasPrefix(pe.Code, "58")
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

func (d db) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := d.Pool.Exec(ctx, sql, args...)
	return tag, mark(ctx, err)
}

func (d db) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := d.Pool.Query(ctx, sql, args...)
	return wrapRows(ctx, r), mark(ctx, err)
}

func (d db) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return markedRow{d.Pool.QueryRow(ctx, sql, args...), ctx}
}

func (d db) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return markedBatch{d.Pool.SendBatch(ctx, b), ctx}
}

// Begin makes db a pgx.BeginFunc target whose transactions mark too.
func (d db) Begin(ctx context.Context) (pgx.Tx, error) {
	t, err := d.Pool.Begin(ctx)
	if err != nil {
		return nil, mark(ctx, err)
	}
	return markedTx{t}, nil
}

func (d db) Ping(ctx context.Context) error { return mark(ctx, d.Pool.Ping(ctx)) }

type markedTx struct{ pgx.Tx }

func (t markedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.Tx.Exec(ctx, sql, args...)
	return tag, mark(ctx, err)
}

func (t markedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := t.Tx.Query(ctx, sql, args...)
	return wrapRows(ctx, r), mark(ctx, err)
}

func (t markedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return markedRow{t.Tx.QueryRow(ctx, sql, args...), ctx}
}

func (t markedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return markedBatch{t.Tx.SendBatch(ctx, b), ctx}
}

func (t markedTx) Commit(ctx context.Context) error { return mark(ctx, t.Tx.Commit(ctx)) }

type markedRow struct {
	pgx.Row
	ctx context.Context
}

func (r markedRow) Scan(dest ...any) error { return mark(r.ctx, r.Row.Scan(dest...)) }

// markedRows marks the failures that pgx reports after the call: a connection
// lost while the rows stream in.
type markedRows struct {
	pgx.Rows
	ctx context.Context
}

func wrapRows(ctx context.Context, r pgx.Rows) pgx.Rows {
	if r == nil {
		return nil
	}
	return markedRows{r, ctx}
}

func (r markedRows) Err() error             { return mark(r.ctx, r.Rows.Err()) }
func (r markedRows) Scan(dest ...any) error { return mark(r.ctx, r.Rows.Scan(dest...)) }

type markedBatch struct {
	pgx.BatchResults
	ctx context.Context
}

func (b markedBatch) Exec() (pgconn.CommandTag, error) {
	tag, err := b.BatchResults.Exec()
	return tag, mark(b.ctx, err)
}

func (b markedBatch) Query() (pgx.Rows, error) {
	r, err := b.BatchResults.Query()
	return wrapRows(b.ctx, r), mark(b.ctx, err)
}

func (b markedBatch) QueryRow() pgx.Row { return markedRow{b.BatchResults.QueryRow(), b.ctx} }
func (b markedBatch) Close() error      { return mark(b.ctx, b.BatchResults.Close()) }
