package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// insertJobs inserts a batch in one statement over unnest; the arrays are
// the columns of the batch. The ON CONFLICT form leaves out the jobs whose
// unique_key an unfinished job of their queue holds, committed or not:
// Postgres makes a concurrent insert of the same key wait for the first to
// end, so two producers can never both insert it.
const insertJobs = `INSERT INTO jobs (id, queue, kind, state, priority, max_attempts, timeout_ms,
	backoff_base_ms, backoff_max_ms, run_at, created_at, unique_key, tags, payload, metadata)
	SELECT id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms, backoff_max_ms,
		run_at, $1, unique_key, tags::jsonb, payload::jsonb, metadata::jsonb
	FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::bigint[],
		$9::bigint[], $10::bigint[], $11::timestamptz[], $12::text[], $13::text[], $14::text[], $15::text[])
		AS b(id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms, backoff_max_ms,
			run_at, unique_key, tags, payload, metadata)`

const onUniqueConflict = ` ON CONFLICT (queue, unique_key)
	WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running') DO NOTHING RETURNING id`

// uniqueTries bounds how often enqueue re-inserts a job whose unique_key
// holder finished between the conflict and the read of the holder.
const uniqueTries = 3

// keyTries bounds the rounds of an idempotent enqueue: a round that loses
// the key to a concurrent call is followed by one that replays it.
const keyTries = 3

// JobEnqueue inserts the jobs. A batch without unique keys or an
// idempotency key is one statement; otherwise one transaction.
func (s *Store) JobEnqueue(ctx context.Context, p *store.JobEnqueueParams) (*store.JobEnqueueResult, error) {
	b := newBatch(p.Jobs, store.Trunc(p.Now))
	if p.IdempotencyKey == "" && !b.unique {
		if _, err := s.pool.Exec(ctx, insertJobs, b.args(b.firsts())...); err != nil {
			return nil, fmt.Errorf("enqueue %d jobs: %w", len(b.jobs), err)
		}
		return b.result(), nil
	}
	keys := p.IdempotencyKeys()
	for range keyTries {
		if len(keys) > 0 {
			if res, err := s.replay(ctx, p, keys); res != nil || err != nil {
				return res, err
			}
		}
		err := s.tx(ctx, func(tx pgx.Tx) error {
			b.reset()
			if err := b.insert(ctx, tx); err != nil {
				return err
			}
			if len(keys) > 0 && len(b.jobs) > 0 {
				return recordKeys(ctx, tx, p, keys, b.jobs[0].ID, b.now)
			}
			return nil
		})
		if errors.Is(err, errKeyTaken) {
			continue // a concurrent call with the same key committed first: replay it
		}
		if err != nil {
			return nil, err
		}
		return b.result(), nil
	}
	return nil, fmt.Errorf("enqueue under idempotency key %q: %w", p.IdempotencyKey, errKeyTaken)
}

// errKeyTaken means another call recorded the idempotency key after this
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
	return &store.JobEnqueueResult{Jobs: []*store.Job{j}, Existing: []bool{true}, Replayed: true}, nil
}

// recordKeys stores the idempotency keys (distinct) for p's TTL (default
// store.IdempotencyTTL), taking over expired records. Keys are written in
// sorted order, so two calls sharing keys wait for each other instead of
// deadlocking. Returns errKeyTaken if any has a live record (a concurrent
// call's, which Postgres made this insert wait for).
func recordKeys(ctx context.Context, tx pgx.Tx, p *store.JobEnqueueParams, keys []string, jobID string, now time.Time) error {
	ttl := p.IdempotencyTTL
	if ttl <= 0 {
		ttl = store.IdempotencyTTL
	}
	tag, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (key, request_hash, job_id, expires_at)
		SELECT k, $2, $3, $4 FROM unnest($1::text[]) AS k ORDER BY k
		ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash,
		job_id = excluded.job_id, expires_at = excluded.expires_at WHERE idempotency_keys.expires_at <= $5`,
		keys, p.RequestHash, jobID, now.Add(ttl), now)
	if err != nil {
		return fmt.Errorf("record idempotency keys: %w", err)
	}
	if tag.RowsAffected() < int64(len(keys)) {
		return errKeyTaken
	}
	return nil
}

// batch is one enqueue call: the jobs as they will be created, in spec
// order, and for each the spec that stands for it.
type batch struct {
	now      time.Time
	jobs     []*store.Job
	existing []bool
	// first[i] is the index of the first spec of the batch with spec i's
	// queue and unique_key (i itself when it has none): one insert stands
	// for all of them.
	first  []int
	unique bool
	// fresh are the jobs as built, before any was replaced by an existing
	// one, so a retried transaction starts over.
	fresh []*store.Job
}

func newBatch(specs []store.JobSpec, now time.Time) *batch {
	b := &batch{now: now, first: make([]int, len(specs)), existing: make([]bool, len(specs))}
	seen := map[[2]string]int{}
	for i := range specs {
		spec := specs[i]
		spec.Normalize(now)
		b.first[i] = i
		if spec.UniqueKey != nil {
			b.unique = true
			k := [2]string{spec.Queue, *spec.UniqueKey}
			if f, ok := seen[k]; ok {
				b.first[i] = f
			} else {
				seen[k] = i
			}
		}
		state := store.StateAvailable
		if spec.RunAt.After(now) {
			state = store.StateScheduled
		}
		b.jobs = append(b.jobs, &store.Job{
			ID: uuid.Must(uuid.NewV7()).String(), Queue: spec.Queue, Kind: spec.Kind, Payload: spec.Payload,
			Priority: spec.Priority, State: state, MaxAttempts: spec.MaxAttempts, Timeout: spec.Timeout,
			Backoff: spec.Backoff, RunAt: spec.RunAt, CreatedAt: now, UniqueKey: spec.UniqueKey,
			Tags: spec.Tags, Metadata: spec.Metadata,
		})
	}
	b.fresh = append([]*store.Job(nil), b.jobs...)
	return b
}

func (b *batch) reset() {
	copy(b.jobs, b.fresh)
	clear(b.existing)
}

// firsts are the indexes of the specs that are inserted.
func (b *batch) firsts() []int {
	var out []int
	for i, f := range b.first {
		if f == i {
			out = append(out, i)
		}
	}
	return out
}

// args are insertJobs' arguments for the jobs at idx.
func (b *batch) args(idx []int) []any {
	n := len(idx)
	var (
		ids, queues, kinds, states = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		prios, maxAtt              = make([]int32, n), make([]int32, n)
		timeouts, bases, maxes     = make([]int64, n), make([]int64, n), make([]int64, n)
		runAts                     = make([]time.Time, n)
		keys, payloads             = make([]*string, n), make([]*string, n)
		tags, metas                = make([]string, n), make([]string, n)
	)
	for k, i := range idx {
		j := b.jobs[i]
		ids[k], queues[k], kinds[k], states[k] = j.ID, j.Queue, j.Kind, string(j.State)
		prios[k], maxAtt[k] = int32(j.Priority), int32(j.MaxAttempts)
		timeouts[k], bases[k], maxes[k] = j.Timeout.Milliseconds(), j.Backoff.Base.Milliseconds(), j.Backoff.Max.Milliseconds()
		runAts[k], keys[k] = j.RunAt, j.UniqueKey
		if len(j.Payload) > 0 {
			p := string(j.Payload)
			payloads[k] = &p
		}
		t, _ := json.Marshal(j.Tags)
		tags[k], metas[k] = string(t), string(j.Metadata)
	}
	return []any{b.now, ids, queues, kinds, states, prios, maxAtt, timeouts, bases, maxes, runAts, keys, tags,
		payloads, metas}
}

// insert inserts the batch, and answers each spec whose unique_key an
// unfinished job holds with that job. A holder that finished between the
// conflict and the read frees the key: the spec is inserted again.
func (b *batch) insert(ctx context.Context, tx pgx.Tx) error {
	pending := b.firsts()
	for range uniqueTries {
		rows, err := tx.Query(ctx, insertJobs+onUniqueConflict, b.args(pending)...)
		inserted, err := collectStrings(rows, err)
		if err != nil {
			return fmt.Errorf("enqueue %d jobs: %w", len(pending), err)
		}
		if len(inserted) == len(pending) {
			pending = nil
			break
		}
		pending, err = b.takeExisting(ctx, tx, pending, inserted)
		if err != nil || len(pending) == 0 {
			return err
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("enqueue: unique_key %q keeps changing hands", *b.jobs[pending[0]].UniqueKey)
	}
	for i, f := range b.first {
		if f != i {
			b.jobs[i], b.existing[i] = b.jobs[f], true
		}
	}
	return nil
}

// takeExisting answers the specs of pending that were not inserted with the
// unfinished jobs holding their keys; it returns those whose holder is gone.
func (b *batch) takeExisting(ctx context.Context, tx pgx.Tx, pending []int, inserted []string) ([]int, error) {
	done := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		done[id] = true
	}
	var conflicted []int
	var queues, keys []string
	for _, i := range pending {
		if j := b.jobs[i]; !done[j.ID] {
			conflicted = append(conflicted, i)
			queues, keys = append(queues, j.Queue), append(keys, *j.UniqueKey)
		}
	}
	rows, err := scanJobs(tx.Query(ctx, `SELECT `+jobColumns+` FROM jobs
		WHERE (queue, unique_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))
		AND unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running')`, queues, keys))
	if err != nil {
		return nil, fmt.Errorf("read jobs holding unique keys: %w", err)
	}
	holder := make(map[[2]string]*jobRow, len(rows))
	for _, r := range rows {
		holder[[2]string{r.Queue, *r.UniqueKey}] = r
	}
	var again []int
	for _, i := range conflicted {
		if r, ok := holder[[2]string{b.jobs[i].Queue, *b.jobs[i].UniqueKey}]; ok {
			b.jobs[i], b.existing[i] = r.job(), true
		} else {
			again = append(again, i)
		}
	}
	return again, nil
}

func (b *batch) result() *store.JobEnqueueResult {
	return &store.JobEnqueueResult{Jobs: b.jobs, Existing: b.existing}
}

func collectStrings(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
