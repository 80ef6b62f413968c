package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// keyTries bounds the rounds of an idempotent enqueue: a round that loses
// the key to a concurrent call is followed by one that replays it.
const keyTries = 3

// JobEnqueue inserts the jobs. A call of at most mergedJobs jobs is merged
// with the calls that arrive while one runs (mergeenqueue.go), a larger one
// runs alone; either way its jobs and its keys commit before it returns.
// Without unique keys or idempotency keys that is one statement, otherwise
// one transaction.
func (s *Store) JobEnqueue(ctx context.Context, p *store.JobEnqueueParams) (*store.JobEnqueueResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	keys := p.IdempotencyKeys()
	merge := len(p.Jobs) <= mergedJobs
	for range keyTries {
		if len(keys) > 0 {
			if res, err := s.replay(ctx, p, keys); res != nil || err != nil {
				return res, err
			}
		}
		c := &enqueueCall{ctx: ctx, p: p, keys: keys}
		s.enqueueOnce(ctx, c, merge)
		if !errors.Is(c.err, errKeyTaken) {
			return c.res, c.err
		}
		// A concurrent call recorded a key first: the next round replays
		// it, and runs alone, so that only its own keys can send it back.
		merge = false
	}
	return nil, fmt.Errorf("enqueue under idempotency key %q: %w", p.IdempotencyKey, errKeyTaken)
}

// errKeyTaken means another call recorded an idempotency key after this
// call found it free.
var errKeyTaken = errors.New("idempotency key recorded concurrently")

// replay answers a repeated idempotency key from the record of the first
// of keys that has a live one: the first call's job (only its id if it was
// pruned since), or ErrConflict. It returns nil, nil when every key is free.
func (s *Store) replay(ctx context.Context, p *store.JobEnqueueParams, keys []string) (*store.JobEnqueueResult, error) {
	var hash, jobID string
	err := s.pool.QueryRow(ctx, `SELECT request_hash, job_id::text FROM idempotency_keys
		WHERE key = ANY($1) AND expires_at > $2 ORDER BY array_position($1, key) LIMIT 1`,
		keys, store.Trunc(p.Now)).Scan(&hash, &jobID)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read idempotency key: %w", err)
	}
	if hash != p.RequestHash {
		return nil, store.ErrConflict
	}
	j, err := s.getJob(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		j, err = &store.Job{ID: jobID}, nil
	}
	if err != nil {
		return nil, err
	}
	return replayOf(j), nil
}

func replayOf(j *store.Job) *store.JobEnqueueResult {
	return &store.JobEnqueueResult{Jobs: []*store.Job{j}, Existing: []bool{true}, Replayed: true}
}

// enqueueCall is one caller's enqueue, whose idempotency keys (keys, from
// IdempotencyKeys) had no live record when it looked, and its answer.
type enqueueCall struct {
	ctx  context.Context
	p    *store.JobEnqueueParams
	keys []string
	b    *batch // its jobs as built at its own instant, then as inserted or found
	// found is set when one of keys has a live record after all, made
	// since the caller looked: it replays that instead.
	found bool
	// repeats is the earlier call of the same run that records one of keys
	// first, when there is one: this call answers from it.
	repeats *enqueueCall
	res     *store.JobEnqueueResult
	err     error
}

// enqueueCalls enqueues the jobs of calls together, in one statement when
// no call has an idempotency key and no job a unique key, otherwise in one
// transaction, and sets each call's answer. Two calls with a unique_key in
// common get one job: the first creates it, the other finds it. A call
// whose first key in order an earlier call of the run records instead
// replays that call's job, or gets ErrConflict for another request hash;
// a call one of whose keys has a live record by now gets errKeyTaken, to
// replay it. Neither inserts anything. Returns errKeyTaken, having
// committed nothing, when another transaction recorded one of the keys
// after this one read them: the calls must look again.
func (s *Store) enqueueCalls(ctx context.Context, calls []*enqueueCall) error {
	keyed, unique := false, false
	for _, c := range calls {
		c.b = newBatch(c.p.Jobs, store.Trunc(c.p.Now))
		keyed, unique = keyed || len(c.keys) > 0, unique || c.b.unique
	}
	if !keyed && !unique {
		m := join(batches(calls))
		if _, err := s.pool.Exec(ctx, insertJobs, m.args(m.firsts())...); err != nil {
			return fmt.Errorf("enqueue %d jobs: %w", len(m.jobs), err)
		}
		for _, c := range calls {
			c.res, c.err = c.b.result(), nil
		}
		return nil
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := findKeys(ctx, tx, calls); err != nil {
			return err
		}
		creating := claimKeys(calls)
		m := join(batches(creating))
		if err := m.insert(ctx, tx); err != nil {
			return err
		}
		m.split(batches(creating))
		return recordKeys(ctx, tx, creating)
	})
	if err != nil {
		return err
	}
	for _, c := range calls {
		switch {
		case c.found:
			c.res, c.err = nil, errKeyTaken
		case c.repeats == nil:
			c.res, c.err = c.b.result(), nil
		case c.repeats.p.RequestHash != c.p.RequestHash:
			c.res, c.err = nil, store.ErrConflict
		default:
			c.res, c.err = replayOf(c.repeats.b.jobs[0]), nil
		}
	}
	return nil
}

// findKeys marks the calls one of whose keys has a record live at the
// call's instant (found): records that committed since their callers
// looked, the keys of an earlier merged run among them.
func findKeys(ctx context.Context, tx pgx.Tx, calls []*enqueueCall) error {
	var keys []string
	for _, c := range calls {
		c.found = false
		keys = append(keys, c.keys...)
	}
	if len(keys) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT key, expires_at FROM idempotency_keys WHERE key = ANY($1)`, keys)
	if err != nil {
		return fmt.Errorf("read idempotency keys: %w", err)
	}
	expires := map[string]time.Time{}
	var key string
	var at time.Time
	if _, err := pgx.ForEachRow(rows, []any{&key, &at}, func() error {
		expires[key] = at
		return nil
	}); err != nil {
		return fmt.Errorf("read idempotency keys: %w", err)
	}
	for _, c := range calls {
		for _, k := range c.keys {
			if at, ok := expires[k]; ok && at.After(store.Trunc(c.p.Now)) {
				c.found = true
			}
		}
	}
	return nil
}

// claimKeys gives each idempotency key to the first call, in order, that
// names it and has jobs, and points a later call that names one at the
// call holding the first such key of its own (repeats). It returns the
// calls that create jobs: those neither found nor repeating.
func claimKeys(calls []*enqueueCall) []*enqueueCall {
	holder := map[string]*enqueueCall{}
	var creating []*enqueueCall
	for _, c := range calls {
		c.repeats = nil
		if c.found {
			continue
		}
		for _, k := range c.keys {
			if h, ok := holder[k]; ok {
				c.repeats = h
				break
			}
		}
		if c.repeats != nil {
			continue
		}
		creating = append(creating, c)
		if len(c.b.jobs) > 0 {
			for _, k := range c.keys {
				holder[k] = c
			}
		}
	}
	return creating
}

func batches(calls []*enqueueCall) []*batch {
	bs := make([]*batch, len(calls))
	for i, c := range calls {
		bs[i] = c.b
	}
	return bs
}

// recordKeys stores the idempotency keys of calls (distinct: claimKeys
// gave each to one call), each naming its call's first job, for its call's
// TTL (default store.IdempotencyTTL), taking over expired records. Keys
// are written in sorted order, so two transactions sharing keys wait for
// each other instead of deadlocking. A record counts as expired at the
// earliest instant of the calls, so no call takes over a record live at
// its own. Returns errKeyTaken if any has a live record (a concurrent
// call's, which Postgres made this insert wait for).
func recordKeys(ctx context.Context, tx pgx.Tx, calls []*enqueueCall) error {
	var keys, hashes, jobIDs []string
	var expires []time.Time
	var now time.Time
	for _, c := range calls {
		if len(c.keys) == 0 || len(c.b.jobs) == 0 {
			continue
		}
		at := store.Trunc(c.p.Now)
		ttl := c.p.IdempotencyTTL
		if ttl <= 0 {
			ttl = store.IdempotencyTTL
		}
		if now.IsZero() || at.Before(now) {
			now = at
		}
		for _, k := range c.keys {
			keys, hashes = append(keys, k), append(hashes, c.p.RequestHash)
			jobIDs, expires = append(jobIDs, c.b.jobs[0].ID), append(expires, at.Add(ttl))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	tag, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (key, request_hash, job_id, expires_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::timestamptz[]) AS r(k) ORDER BY k
		ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash,
		job_id = excluded.job_id, expires_at = excluded.expires_at WHERE idempotency_keys.expires_at <= $5`,
		keys, hashes, jobIDs, expires, now)
	if err != nil {
		return fmt.Errorf("record idempotency keys: %w", err)
	}
	if tag.RowsAffected() < int64(len(keys)) {
		return errKeyTaken
	}
	return nil
}
