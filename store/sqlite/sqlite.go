// Package sqlite is Tether's embedded backend: one SQLite file in WAL mode,
// one writer connection and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"
	"github.com/pressly/goose/v3"

	"github.com/tetherq/tether/migrations"
	"github.com/tetherq/tether/store"
)

var _ store.Store = (*Store)(nil)

// ErrInUse means another Store, in this process or another, has the
// database file open (see lockFile).
var ErrInUse = errors.New("in use")

// Store is the SQLite implementation of store.Store.
type Store struct {
	// db owns the writer connection: SQLite takes one writer at a time
	// anyway, and one connection makes the queue explicit in Go instead of
	// in busy retries.
	db *sqlx.DB
	w  *writer
	// r serves reads concurrently with the writer (WAL).
	r    reader
	wake *store.Wakeups
	// lock is PATH.lock, flocked until Close; nil for :memory:.
	lock *os.File
	ckpt *checkpointer
	// rescueHold is how long a rescue transaction may hold the writer
	// after waiting for it (rescueShare; tests pin it).
	rescueHold func(waited time.Duration) time.Duration
}

// Options tune Open.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: "normal" (default) keeps
	// every commit across a process crash; "full" also across power loss, at
	// the cost of an fsync per commit.
	Synchronous string
	// Readers is the size of the read pool (default 4).
	Readers int
	// BusyTimeout is how long a statement waits for a lock another
	// program holds on the file (a backup, the sqlite3 shell) before the
	// call fails with store.ErrUnavailable (default 10s).
	BusyTimeout time.Duration
	// Logger receives the migrations Open applies (and that there were
	// none); nil keeps them silent.
	Logger *slog.Logger
}

// Open opens (creating if needed) the database file at path and migrates it
// to the newest schema. It returns ErrInUse, having touched nothing, when
// another Store has the file open; it holds PATH.lock until Close.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	lock, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, path, o)
	if err != nil {
		unlock(lock)
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func unlock(lock *os.File) error {
	if lock == nil {
		return nil
	}
	return lock.Close() // closing the last descriptor drops the flock
}

func open(ctx context.Context, path string, o Options) (*Store, error) {
	register()
	if o.Synchronous == "" {
		o.Synchronous = "normal"
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10))
	q.Set("_synchronous", o.Synchronous)
	db, err := sqlx.Open(driverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db.DB, o.Logger); err != nil {
		db.Close()
		return nil, err
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s for writing: %w", path, err)
	}
	w := newWriter(conn)
	if err := w.loadLimits(ctx); err != nil {
		w.close()
		db.Close()
		return nil, err
	}
	cdb, err := sql.Open(driverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		w.close()
		db.Close()
		return nil, fmt.Errorf("open %s for checkpoints: %w", path, err)
	}
	cdb.SetMaxOpenConns(1)
	ckpt := startCheckpointer(cdb)
	q.Set("_query_only", "1")
	r, err := sqlx.Open(driverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		ckpt.close()
		w.close()
		db.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(o.Readers)
	return &Store{db: db, w: w, r: reader{r}, wake: store.NewWakeups(), ckpt: ckpt, rescueHold: rescueShare}, nil
}

// driverName is go-sqlite3 with the pragmas every connection needs and the
// DSN cannot carry.
const driverName = "sqlite3_tether"

var registerDriver sync.Once

func register() {
	registerDriver.Do(func() {
		sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			// 64 MiB of page cache: the hot pages of the job indexes stay in
			// memory. No automatic checkpoints: a connection of its own
			// copies the WAL into the database (checkpointer), so no
			// commit waits for the copy. Temporary b-trees (the sorted lease
			// candidates, IN lists) in memory: on disk, each would cost a
			// file's creation per statement.
			_, err := c.Exec(`PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 0;
				PRAGMA temp_store = MEMORY`, nil)
			return err
		}})
	})
}

func migrate(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	dir := migrations.SQLiteDir()
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if log != nil {
		opts = append(opts, goose.WithSlog(log), goose.WithVerbose(true))
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, dir, opts...)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", mark(ctx, err))
	}
	return nil
}

// Close closes both pools, then lets another Store open the file.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.close(), s.db.Close(), s.ckpt.close(), unlock(s.lock))
}

// Ping checks both pools.
func (s *Store) Ping(ctx context.Context) error {
	// The writer's pool has one connection and the writer holds it for
	// good: ping that connection itself, not the pool.
	return errors.Join(s.r.PingContext(ctx), mark(ctx, s.w.conn.PingContext(ctx)))
}

// Now is the local clock: the database lives in this process.
func (s *Store) Now(context.Context) (time.Time, error) { return time.Now().UTC(), nil }

// LeaseWakeup registers a waiter on queues, woken in process.
func (s *Store) LeaseWakeup(queues []string) *store.Waiter { return s.wake.Wait(queues) }

// tx runs fn in one write transaction and commits it. When fn reports that
// jobs may have become leasable, waiting leasers are woken after the
// commit: in each queue as many as jobs became available there
// (txn.moved), every one in a queue resumed (txn.resume).
func (s *Store) tx(ctx context.Context, fn func(tx *txn) (wake bool, err error)) (err error) {
	caller := ctx
	defer func() { err = mark(caller, err) }()
	// A cancellable context makes the driver run every step in a goroutine
	// of its own so that it can interrupt it; transactions here are short,
	// so they run to the end instead.
	ctx = context.WithoutCancel(ctx)
	s.w.mu.Lock()
	defer s.w.unlock(time.Now())
	// IMMEDIATE takes the write lock at BEGIN: a deferred transaction that
	// reads and then writes can fail with SQLITE_BUSY, without retry, when
	// another process holds the lock; at BEGIN busy_timeout applies.
	if _, err := s.w.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx := &txn{w: s.w}
	defer tx.close()
	wake, err := fn(tx)
	if err == nil {
		err = tx.flushCounts(ctx)
	}
	if err != nil {
		if _, rerr := s.w.conn.ExecContext(ctx, "ROLLBACK"); rerr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if _, err := s.w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		s.w.conn.ExecContext(ctx, "ROLLBACK") // COMMIT can fail and leave the transaction open
		return fmt.Errorf("commit: %w", err)
	}
	s.ckpt.committed()
	tx.committed(s.wake)
	if wake {
		tx.signal(s.wake)
	}
	return nil
}
