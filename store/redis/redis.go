// Package redis is Tether's shared backend on Redis: any number of server
// replicas use one redis-server.
//
// Every state transition is one Lua script (lua/*.lua), loaded at start-up
// and run with EVALSHA, so it is atomic: each script checks the job's
// state, owner and token before it changes anything, and racing replicas
// or stale workers change nothing. The scripts keep these keys, under a
// prefix (default "tether:"):
//
//	j:<id>             hash: the job; owner (w) and token (t) in fields of their own
//	p:<id>             string: a payload too large to keep in the hash
//	a:<id>             list: closed attempts, oldest first (the open one, and the
//	                   one that succeeded, are on the job)
//	{q}:av             zset: available jobs, scored by priority then run_at; ties by id
//	{q}:sched          zset: scheduled jobs by run_at
//	{q}:retry          zset: the retrying ones among them (attempt > 0), by run_at
//	{q}:run            zset: running jobs by lease expiry
//	{q}:done, {q}:dead, {q}:cancelled
//	                   zsets: finished jobs by finished_at, for retention
//	{q}:dk:<kind>      zset: the dead jobs of one kind by finished_at, for
//	                   JobListDead's kind filter (deadkindindex.go)
//	{q}:ids            zset: every job of the queue, scored 0, so newest first by id
//	{q}:m              hash: paused; limits (lim, store.Limits as JSON), slots (set
//	                   when they count slots), the queue rate's GCRA state (tat)
//	{q}:kr:<key>       set: the running jobs of a concurrency key
//	{q}:kt             hash: each key rate's GCRA state, expiring with the latest
//	{q}:thr            hash: leases each limit held back, by reason
//	{q}:u:<key>        string: the unfinished job holding a unique_key
//	workers, holders   zsets: workers (and those holding jobs) by last sign of life
//	w:<id>, wj:<id>    hash: a worker's registration; set: the jobs it holds
//	wl:<id>            list: jobs taken from a worker, reported at its next heartbeat
//	nodes, stats       hashes: server nodes; the rescue total
//	idem:<key>         hash: an idempotency key, with a TTL
//	queues             set: queue names
//	tp:<minute>        hash: attempts closed in that minute (ms), by outcome, for
//	                   ThroughputList; expires after 25 hours (insights.go)
//	rescues            zset: the newest 10000 rescues by time, for RescueList
//	sc:<name>          hash: a schedule (schedule.go names its fields)
//	schedules          zset: schedule names, scored 0, so by name
//	scdue              zset: schedules not paused, by next_fire_at
//	sj:<name>          zset: the ids of the jobs a schedule fired, scored 0
//	{q}:depth          zset: the queue's backlog per minute, for QueueDepthList;
//	                   kept a week (depth.go)
//	{q}:min            zset: what finished each minute per kind, for QueueMinuteList;
//	                   kept a week (kindminute.go)
//	{q}:hr             zset: the same summed per hour, rewritten with each minute
//	                   (lib_hours.lua, minutehours.go)
//	migrations         set: names of the one-off changes to the keys that Open
//	                   has made (migrate.go)
//
// A queue's six counts are the cardinalities of its six state sets, its
// retrying count that of its retry set. A lease costs one read and five
// writes per job, an ack one read and five (six on a minute's first ack:
// the throughput counter's EXPIRE); a job's death, and its leaving dead
// (retry, delete, prune), one write more, in its kind's dead set.
//
// Keys of one queue share the {queue} hash tag. Job and worker keys do not
// (a call names only a job id or a worker id), so scripts cross hash slots:
// the backend needs one Redis primary, not Redis Cluster, for now.
//
// Wake-ups: a script that makes jobs leasable PUBLISHes on <prefix>wake;
// every Store subscribes once and signals its Hub, so a long-poll on one
// replica wakes on an enqueue or rescue on another.
//
// Durability: a 2xx means the script ran. What survives a crash is
// redis-server's persistence setting (docs/deploy.md): with appendonly yes,
// a killed redis-server loses nothing acknowledged; a machine crash loses
// nothing under appendfsync always, and about the last second under
// everysec.
package redis

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
)

var _ store.Store = (*Store)(nil)

// DefaultPrefix is the key prefix of a Store opened without WithPrefix.
const DefaultPrefix = "tether:"

// DefaultPollInterval is how often waiting leasers are woken while the
// wake-up subscription is down (store.WakeupPollInterval).
const DefaultPollInterval = store.WakeupPollInterval

// Store is the Redis implementation of store.Store.
type Store struct {
	rdb     *goredis.Client
	prefix  string
	scripts *scripts
	wake    *store.Wakeups
	sub     *subscriber
	closing sync.Once
}

// Option tunes Open.
type Option func(*options)

type options struct {
	prefix string
	poll   time.Duration
}

// WithPrefix puts every key under prefix instead of DefaultPrefix. Stores
// with different prefixes share a redis-server without seeing each other.
func WithPrefix(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// WithPollInterval sets how often leasers are woken while the wake-up
// subscription is down (DefaultPollInterval).
func WithPollInterval(d time.Duration) Option { return func(o *options) { o.poll = d } }

// Open connects to the redis-server of rawURL (redis://[user:password@]host:port/db
// or rediss:// for TLS; a "prefix" query parameter sets the key prefix),
// loads the scripts, brings keys written by an earlier version up to date
// (once: retryindex.go) and subscribes to wake-ups.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	o := options{prefix: DefaultPrefix, poll: DefaultPollInterval}
	rest, prefix, err := cutPrefix(rawURL)
	if err != nil {
		return nil, err
	}
	if prefix != "" {
		o.prefix = prefix
	}
	for _, opt := range opts {
		opt(&o)
	}
	ro, err := goredis.ParseURL(rest)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	// A script whose reply was lost may have run: replaying it could apply
	// a lease or a fail twice, so a failed call reports the error instead.
	if ro.MaxRetries == 0 {
		ro.MaxRetries = -1
	}
	rdb := goredis.NewClient(ro)
	rdb.AddHook(unavailable{})
	s := &Store{rdb: rdb, prefix: o.prefix, scripts: newScripts(), wake: store.NewWakeups()}
	if err := s.scripts.load(ctx, rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("load scripts into %s: %w", ro.Addr, err)
	}
	if err := s.migrate(ctx); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("upgrade the keys on %s: %w", ro.Addr, err)
	}
	s.sub, err = subscribe(ctx, rdb, o.prefix+"wake", s.wake, o.poll)
	if err != nil {
		rdb.Close()
		return nil, fmt.Errorf("subscribe to wake-ups on %s: %w", ro.Addr, err)
	}
	return s, nil
}

// cutPrefix takes Tether's own "prefix" query parameter out of a URL that
// go-redis would otherwise refuse.
func cutPrefix(rawURL string) (rest, prefix string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", fmt.Errorf("redis url: %w", err)
	}
	q := u.Query()
	if !q.Has("prefix") {
		return rawURL, "", nil
	}
	prefix = q.Get("prefix")
	q.Del("prefix")
	u.RawQuery = q.Encode()
	return u.String(), prefix, nil
}

// Close stops the wake-up subscription and closes the connections.
func (s *Store) Close() error {
	var err error
	s.closing.Do(func() {
		s.sub.close()
		err = s.rdb.Close()
	})
	return err
}

// Ping checks that redis-server answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

// Now is redis-server's clock (TIME): the one clock every replica corrects
// its own to.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("redis TIME: %w", err)
	}
	return t.UTC(), nil
}

// LeaseWakeup registers a waiter, woken by the wake-up messages naming
// one of its queues, from any replica, this one included (a script's
// PUBLISH reaches this store's own subscription too).
func (s *Store) LeaseWakeup(queues []string) *store.Waiter { return s.wake.Wait(queues) }

// errCode maps a script's status to the store's errors.
func errCode(code string) error {
	switch code {
	case "ok", "replay":
		return nil
	case "nf":
		return store.ErrNotFound
	case "lost":
		return store.ErrLeaseLost
	case "invalid":
		return store.ErrInvalidState
	case "conflict":
		return store.ErrConflict
	}
	return errors.New("redis script: unexpected status " + code)
}
