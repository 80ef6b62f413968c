// Package postgres is Tether's shared backend: any number of server
// replicas on one Postgres database.
//
// The hot paths are single statements. A lease is one UPDATE over a
// SELECT … FOR UPDATE SKIP LOCKED, so leasers on different replicas skip
// each other's rows instead of queueing; on one replica, leases of the same
// queues, ack-only settles and enqueues of a few jobs that arrive while one
// of their kind runs are merged into the next statement (merge.go), one
// commit for several callers. An enqueue is one INSERT over unnest; acks
// settle in one statement with their attempt history. Endings
// that need the failure decisions (fail, release, rescue, reap) lock their
// rows, apply store.Decide in Go and write every decision back in one
// statement, guarded again on (id, owner, token, running), so a replica
// that lost the race changes nothing. Rescues and reaps lock with SKIP
// LOCKED: replicas scanning at once split the work instead of waiting.
//
// Statement-level triggers keep the queue counts and send one NOTIFY per
// queue per statement that makes jobs leasable; each Store listens on a
// dedicated connection and wakes its long-polls from there.
//
// Every instant comes from the params (store.Trunc'd to the millisecond);
// no mutating statement reads a clock. Now reads the database's, which the
// replicas share.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/tetherq/tether/migrations"
	"github.com/tetherq/tether/store"
)

var _ store.Store = (*Store)(nil)

// Store is the Postgres implementation of store.Store.
type Store struct {
	// pool serves reads and every write whose success the API reports as
	// durable: enqueue, ack, fail, release, rescue, admin changes.
	pool db
	// lax serves the writes that may be lost in a database crash without
	// breaking a promise (DESIGN: a 2xx means committed for enqueue, ack
	// and fail): leases, extends, registrations, node heartbeats,
	// promotion. (Worker heartbeats stay durable: they hand out lost jobs.) Its sessions run
	// with synchronous_commit off, so those commits do not wait for a WAL
	// flush; on a disk where a flush takes a millisecond or more that
	// halves the flushes of the lease-and-ack loop. A lease lost in a crash
	// leaves the job available, and the worker's ack then answers
	// lease_lost: the job runs again, as after any crash. WAL is one
	// sequence, so a durable commit flushes every lax commit before it.
	lax      db
	wake     *store.Wakeups
	limited  limitedQueues
	channel  string // this schema's NOTIFY channel
	lis      *listener
	acks     ackMerger     // ack-only settles, merged while one runs
	leases   leaseMergers  // leases of the same queues, merged while one runs
	enqueues enqueueMerger // enqueues of a few jobs, merged while one runs
}

// DefaultConnectTimeout bounds a connection attempt when the URL sets no
// connect_timeout. pgx has none of its own, so a server that drops
// packets (rather than refusing) would hold a request for as long as the
// kernel retries; with a bound it answers unavailable instead.
const DefaultConnectTimeout = 10 * time.Second

// Option tunes Open.
type Option func(*options)

type options struct {
	log *slog.Logger
}

// WithLogger logs the migrations Open applies (and that there were none)
// to log; without it they are silent.
func WithLogger(log *slog.Logger) Option { return func(o *options) { o.log = log } }

// Open connects to the database at url (a postgres:// URL or a key=value
// DSN; pgxpool's pool_* parameters apply), migrates it to the newest
// schema, and starts listening for wake-ups. The schema is the first one on
// the connection's search_path, so several stores can share a database in
// separate schemas (…&search_path=tenant_a).
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse postgres url: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	laxCfg := cfg.Copy()
	if laxCfg.ConnConfig.RuntimeParams == nil {
		laxCfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	laxCfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	lax, err := pgxpool.NewWithConfig(ctx, laxCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	s := &Store{pool: db{pool}, lax: db{lax}, wake: store.NewWakeups()}
	if err := s.migrate(ctx, o.log); err != nil {
		s.closePools()
		return nil, err
	}
	if err := pool.QueryRow(ctx, `SELECT tether_channel(current_schema())`).Scan(&s.channel); err != nil {
		s.closePools()
		return nil, fmt.Errorf("name the notification channel: %w", err)
	}
	s.lis = startListener(ctx, cfg.ConnConfig.Copy(), s.channel, s.wake, s.limited.forget)
	return s, nil
}

func (s *Store) closePools() {
	s.lax.Close()
	s.pool.Close()
}

// migrate applies the embedded migrations under a session advisory lock,
// so replicas starting together migrate once: the others wait for the lock
// and then find nothing to do.
func (s *Store) migrate(ctx context.Context, log *slog.Logger) error {
	var schema *string
	if err := s.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("read current schema: %w", err)
	}
	if schema == nil {
		return errors.New("migrate: no schema on the search_path exists; create it first")
	}
	dir := migrations.PostgresDir()
	// One lock per schema: stores in other schemas of the same database
	// migrate independently. A one-second probe instead of goose's five
	// keeps a replica that lost the race from idling after the winner is
	// done.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID(*schema)), lock.WithLockTimeout(1, 300))
	if err != nil {
		return err
	}
	sqlDB := stdlib.OpenDBFromPool(s.pool.Pool)
	defer sqlDB.Close()
	gopts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker)}
	if log != nil {
		gopts = append(gopts, goose.WithSlog(log), goose.WithVerbose(true))
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, dir, gopts...)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate schema %q: %w", *schema, err)
	}
	return nil
}

// lockID is the advisory lock key of migrations in schema.
func lockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("tether migrations " + schema))
	return int64(h.Sum64())
}

// Close stops the listener and closes the pools.
func (s *Store) Close() error {
	s.lis.stop()
	s.closePools()
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Now is the database's clock, the one clock every replica shares.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("read the database clock: %w", err)
	}
	return now.UTC(), nil
}

// LeaseWakeup registers a waiter, woken by the notifications naming one
// of its queues on this store's channel, from any replica, or by the poll
// fallback while the listener is reconnecting.
func (s *Store) LeaseWakeup(queues []string) *store.Waiter { return s.wake.Wait(queues) }

// querier is what both the pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// maxTries bounds the retries of a transaction that Postgres aborted to
// break a deadlock: two settles of overlapping ids, or a deregister racing
// its worker's lease, can lock the same rows in opposite orders.
const maxTries = 3

// tx runs fn in a transaction and commits it, retrying the whole of it when
// Postgres aborted it as a deadlock victim or for serialization.
func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for range maxTries {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
