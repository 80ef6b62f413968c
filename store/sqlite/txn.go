package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/tetherq/tether/store"
)

// txn is a write transaction whose statements are prepared once on the
// writer connection and reused. Preparing an UPDATE of jobs compiles its
// triggers and index maintenance, which costs more than running it.
type txn struct {
	*sqlx.Tx
	cache *stmtCache
	// local holds statements prepared inside this transaction: the writer's
	// only connection is busy, so the cache learns them after it ends.
	local map[string]*sqlx.Stmt
	// counts are the changes to queue_counts this transaction makes, added
	// up and written once before it commits.
	counts map[countKey]int64
}

type countKey struct {
	queue string
	state store.State
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

// flushCounts writes the recorded count changes, one statement per queue
// and state however many jobs moved.
func (t *txn) flushCounts(ctx context.Context) error {
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

// stmtCache holds the writer's prepared statements by query text.
type stmtCache struct {
	db *sqlx.DB
	mu sync.Mutex
	m  map[string]*sqlx.Stmt
}

// maxCached bounds the cache: queries built from variable-length lists
// (lease over many queues) would otherwise grow it without end.
const maxCached = 256

func (c *stmtCache) lookup(query string) *sqlx.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

// learn prepares queries on the writer. Call it with no transaction open
// in this goroutine: it needs the writer's connection.
func (c *stmtCache) learn(ctx context.Context, queries []string) {
	for _, q := range queries {
		c.mu.Lock()
		_, known := c.m[q]
		full := len(c.m) >= maxCached
		c.mu.Unlock()
		if known || full {
			continue
		}
		st, err := c.db.PreparexContext(ctx, q)
		if err != nil {
			continue // the statement still runs unprepared next time
		}
		c.mu.Lock()
		if _, known := c.m[q]; known {
			st.Close()
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
}

func (t *txn) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if st := t.cache.lookup(query); st != nil {
		return t.Tx.StmtxContext(ctx, st), nil
	}
	if st, ok := t.local[query]; ok {
		return st, nil
	}
	st, err := t.Tx.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if t.local == nil {
		t.local = map[string]*sqlx.Stmt{}
	}
	t.local[query] = st
	return st, nil
}

// learned lists the queries this transaction prepared for itself.
func (t *txn) learned() []string {
	out := make([]string, 0, len(t.local))
	for q := range t.local {
		out = append(out, q)
	}
	return out
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
		return t.Tx.QueryRowxContext(ctx, query, args...) // reports the same error
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
