package sqlite

import (
	"container/list"
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tetherq/tether/store"
)

// writer is the store's only writing connection, held for the store's
// life. Transactions on it are BEGIN IMMEDIATE … COMMIT statements rather
// than database/sql transactions: a database/sql Tx watches its context with
// a goroutine per query, which on the hot path costs more than the query.
type writer struct {
	mu   sync.Mutex // one transaction at a time
	conn *sqlx.Conn
	// stmts are the statements prepared on conn, by query text, each an
	// element of recent, which holds the most recently used first.
	stmts  map[string]*list.Element
	recent *list.List
	// prepared counts the statements prepared (tests).
	prepared int
	// held, if set, is told how long each transaction held the writer,
	// before the next one takes it (tests and benchmarks).
	held func(time.Duration)
}

func newWriter(conn *sqlx.Conn) *writer {
	return &writer{conn: conn, stmts: map[string]*list.Element{}, recent: list.New()}
}

// unlock lets the next transaction have the writer, which this one took at
// since.
func (w *writer) unlock(since time.Time) {
	if w.held != nil {
		w.held(time.Since(since))
	}
	w.mu.Unlock()
}

// cached is one prepared statement of the writer's cache.
type cached struct {
	query string
	st    *sqlx.Stmt
}

// maxCached bounds the statement cache: queries built from variable-length
// lists (a prune's ids, a lease's queues) would otherwise grow it without
// end. A full cache drops its least recently used statement for a new
// one, so the statements of the hot paths stay prepared however many
// one-off texts pass through. (A cache that stopped taking statements once
// full prepared every text new to it on each use, for good: after a long
// run of prunes of varying sizes, a lease naming a new set of queues, or a
// single enqueue, compiled its statements on every call; single enqueues
// then took a fifth longer.)
const maxCached = 256

// txn is one write transaction. Its statements are prepared once on the
// writer connection and reused: preparing an UPDATE of jobs compiles its
// index maintenance, which costs more than running it.
type txn struct {
	w *writer
	// once holds the statements the cache dropped meanwhile, closed when
	// the transaction ends: it may still be reading their rows.
	once []*sqlx.Stmt
	// counts are the changes to queue_counts this transaction makes, added
	// up and written once before it commits.
	counts map[countKey]int64
	// ends are the attempts it closed per minute and outcome, for the
	// throughput table, written the same way.
	ends map[endKey]int64
	// resumed are the queues it resumed: every waiter of theirs is woken.
	resumed []string
}

type countKey struct {
	queue string
	state store.State
}

func (t *txn) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	w := t.w
	if e, ok := w.stmts[query]; ok {
		w.recent.MoveToFront(e)
		return e.Value.(*cached).st, nil
	}
	st, err := w.conn.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	w.prepared++
	if len(w.stmts) >= maxCached {
		old := w.recent.Remove(w.recent.Back()).(*cached)
		delete(w.stmts, old.query)
		t.once = append(t.once, old.st) // this transaction may still read its rows
	}
	w.stmts[query] = w.recent.PushFront(&cached{query, st})
	return st, nil
}

func (t *txn) close() {
	for _, st := range t.once {
		st.Close()
	}
}

// moved records that n jobs of queue went from state from to state to;
// from "" is an insert and to "" a delete.
func (t *txn) moved(queue string, from, to store.State, n int64) {
	if from == to || n == 0 {
		return
	}
	if t.counts == nil {
		t.counts = map[countKey]int64{}
	}
	if from != "" {
		t.counts[countKey{queue, from}] -= n
	}
	if to != "" {
		t.counts[countKey{queue, to}] += n
	}
}

// resume records that queue was resumed.
func (t *txn) resume(queue string) { t.resumed = append(t.resumed, queue) }

// signal wakes, after the commit, as many waiters of each queue as jobs
// became available in it, and every waiter of a queue resumed.
func (t *txn) signal(w *store.Wakeups) {
	for k, n := range t.counts {
		if k.state == store.StateAvailable && n > 0 {
			w.Signal(k.queue, int(n))
		}
	}
	for _, q := range t.resumed {
		w.Signal(q, 0)
	}
}

// flushCounts writes the recorded count changes, one statement per queue
// and state however many jobs moved, and the throughput of the attempts
// closed.
func (t *txn) flushCounts(ctx context.Context) error {
	if err := t.flushEnds(ctx); err != nil {
		return err
	}
	for k, n := range t.counts {
		if n == 0 {
			continue
		}
		_, err := t.ExecContext(ctx, `INSERT INTO queue_counts (queue, state, n) VALUES (?, ?, ?)
			ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n`, k.queue, k.state, n)
		if err != nil {
			return fmt.Errorf("count %s jobs of %q: %w", k.state, k.queue, err)
		}
	}
	return nil
}

func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (t *txn) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryxContext(ctx, args...)
}

func (t *txn) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return t.w.conn.QueryRowxContext(ctx, query, args...) // reports the same error
	}
	return st.QueryRowxContext(ctx, args...)
}

func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (t *txn) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return sqlx.GetContext(ctx, t, dest, query, args...)
}

func (t *txn) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return sqlx.SelectContext(ctx, t, dest, query, args...)
}

func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.stmts {
		e.Value.(*cached).st.Close()
	}
	return w.conn.Close()
}
