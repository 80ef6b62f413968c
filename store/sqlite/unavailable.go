package sqlite

import (
	"context"
	"errors"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"

	"github.com/tetherq/tether/store"
)

// mark is this backend's translation of go-sqlite3's failures into
// store.ErrUnavailable, applied where every call ends: the write
// transaction (Store.tx) and the reader.
func mark(ctx context.Context, err error) error { return store.Unavailable(ctx, err, down) }

// down reports SQLite's signs of a file it cannot use now: a lock another
// program held past the busy timeout (BUSY, LOCKED), a failed read or
// write (IOERR), a file that cannot be opened (CANTOPEN), a full disk
// (FULL). Other failures are answers: a constraint, a malformed query.
func down(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrIoErr, sqlite3.ErrCantOpen, sqlite3.ErrFull:
		return true
	}
	return false
}

// reader is the read pool, marking its failures.
type reader struct{ *sqlx.DB }

func (r reader) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return mark(ctx, r.DB.SelectContext(ctx, dest, query, args...))
}

func (r reader) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return mark(ctx, r.DB.GetContext(ctx, dest, query, args...))
}

func (r reader) PingContext(ctx context.Context) error { return mark(ctx, r.DB.PingContext(ctx)) }
