// Package sqlite is Tether's embedded backend: one SQLite file in WAL mode,
// one writer connection and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"
	"github.com/pressly/goose/v3"

	"github.com/tetherq/tether/migrations"
	"github.com/tetherq/tether/store"
)

var _ store.Store = (*Store)(nil)

// Store is the SQLite implementation of store.Store.
type Store struct {
	// w is the only writer. SQLite takes one writer at a time anyway; one
	// connection makes the queue explicit in Go instead of in busy retries.
	w *sqlx.DB
	// r serves reads concurrently with the writer (WAL).
	r     *sqlx.DB
	hub   *store.Hub
	cache *stmtCache
}

// Options tune Open.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: "normal" (default) keeps
	// every commit across a process crash; "full" also across power loss, at
	// the cost of an fsync per commit.
	Synchronous string
	// Readers is the size of the read pool (default 4).
	Readers int
}

// Open opens (creating if needed) the database file at path and migrates it
// to the newest schema.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	register()
	if o.Synchronous == "" {
		o.Synchronous = "normal"
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "10000")
	q.Set("_synchronous", o.Synchronous)
	// Immediate: a deferred transaction that reads and then writes can fail
	// with SQLITE_BUSY (no retry) when another process holds the write lock;
	// taking the lock at BEGIN makes busy_timeout apply.
	q.Set("_txlock", "immediate")
	w, err := sqlx.Open(driverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w.DB); err != nil {
		w.Close()
		return nil, err
	}
	q.Del("_txlock")
	q.Set("_query_only", "1")
	r, err := sqlx.Open(driverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(o.Readers)
	return &Store{w: w, r: r, hub: store.NewHub(), cache: &stmtCache{db: w, m: map[string]*sqlx.Stmt{}}}, nil
}

// driverName is go-sqlite3 with the pragmas every connection needs and the
// DSN cannot carry.
const driverName = "sqlite3_tether"

var registerDriver sync.Once

func register() {
	registerDriver.Do(func() {
		sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			// 64 MiB of page cache: the hot pages of the job indexes stay in
			// memory. Checkpoints every 4,000 pages (16 MiB) instead of 1,000
			// copy a page rewritten by many commits once.
			_, err := c.Exec(`PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 4000`, nil)
			return err
		}})
	})
}

func migrate(ctx context.Context, db *sql.DB) error {
	dir, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, dir, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Close closes both pools.
func (s *Store) Close() error {
	s.cache.close()
	return errors.Join(s.r.Close(), s.w.Close())
}

// Ping checks both pools.
func (s *Store) Ping(ctx context.Context) error {
	return errors.Join(s.r.PingContext(ctx), s.w.PingContext(ctx))
}

// Now is the local clock: the database lives in this process.
func (s *Store) Now(context.Context) (time.Time, error) { return time.Now().UTC(), nil }

// LeaseWakeup returns the in-process wake-up channel.
func (s *Store) LeaseWakeup([]string) <-chan struct{} { return s.hub.Wait() }

// tx runs fn in one write transaction and commits it. When fn reports that
// jobs became leasable, waiting leasers are woken after the commit.
func (s *Store) tx(ctx context.Context, fn func(tx *txn) (wake bool, err error)) error {
	// A cancellable context makes the driver run every step and every row
	// in a goroutine of its own so that it can interrupt it; transactions
	// here are short, so they run to the end instead.
	ctx = context.WithoutCancel(ctx)
	sqltx, err := s.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx := &txn{Tx: sqltx, cache: s.cache}
	wake, err := fn(tx)
	if err == nil {
		err = tx.flushCounts(ctx)
	}
	if err != nil {
		tx.Rollback()
		s.cache.learn(ctx, tx.learned())
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.cache.learn(ctx, tx.learned())
	if wake {
		s.hub.Signal()
	}
	return nil
}
