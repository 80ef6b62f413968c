package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// insertJobs inserts a batch in one statement over unnest; the arrays are
// the columns of the batch, each job with its own created_at (merged
// callers each bring their own instant). The ON CONFLICT form leaves out
// the jobs whose unique_key an unfinished job of their queue holds,
// committed or not: Postgres makes a concurrent insert of the same key wait
// for the first to end, so two producers can never both insert it.
const insertJobs = `INSERT INTO jobs (id, queue, kind, state, priority, max_attempts, timeout_ms,
	backoff_base_ms, backoff_max_ms, run_at, created_at, unique_key, tags, payload, metadata, traceparent, tracestate,
	concurrency_key, schedule, scheduled_for)
	SELECT id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms, backoff_max_ms,
		run_at, created_at, unique_key, tags::jsonb, payload::jsonb, metadata::jsonb, traceparent, tracestate,
		concurrency_key, schedule, scheduled_for
	FROM unnest($1::timestamptz[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[],
		$8::bigint[], $9::bigint[], $10::bigint[], $11::timestamptz[], $12::text[], $13::text[], $14::text[],
		$15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::timestamptz[])
		AS b(created_at, id, queue, kind, state, priority, max_attempts, timeout_ms, backoff_base_ms,
			backoff_max_ms, run_at, unique_key, tags, payload, metadata, traceparent, tracestate,
			concurrency_key, schedule, scheduled_for)`

const onUniqueConflict = ` ON CONFLICT (queue, unique_key)
	WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running') DO NOTHING RETURNING id`

// uniqueTries bounds how often enqueue re-inserts a job whose unique_key
// holder finished between the conflict and the read of the holder.
const uniqueTries = 3

// batch is the jobs of one insert, as they will be created, in spec order,
// and for each the spec that stands for it.
type batch struct {
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

// newBatch builds the jobs of specs as created at now.
func newBatch(specs []store.JobSpec, now time.Time) *batch {
	b := &batch{}
	for i := range specs {
		spec := specs[i]
		spec.Normalize(now)
		b.jobs = append(b.jobs, spec.NewJob(uuid.Must(uuid.NewV7()).String(), now))
	}
	b.link()
	return b
}

// join is one batch of the fresh jobs of bs, in order: a unique_key that
// two of them share is inserted once, for the first.
func join(bs []*batch) *batch {
	m := &batch{}
	for _, b := range bs {
		m.jobs = append(m.jobs, b.fresh...)
	}
	m.link()
	return m
}

// split hands the jobs of m, as inserted or found, back to the batches it
// was joined from.
func (m *batch) split(bs []*batch) {
	at := 0
	for _, b := range bs {
		at += copy(b.jobs, m.jobs[at:])
		copy(b.existing, m.existing[at-len(b.jobs):at])
	}
}

// link points each job at the first of the batch with its queue and
// unique_key, and keeps the jobs as built.
func (b *batch) link() {
	b.first, b.existing = make([]int, len(b.jobs)), make([]bool, len(b.jobs))
	seen := map[[2]string]int{}
	for i, j := range b.jobs {
		b.first[i] = i
		if j.UniqueKey == nil {
			continue
		}
		b.unique = true
		k := [2]string{j.Queue, *j.UniqueKey}
		if f, ok := seen[k]; ok {
			b.first[i] = f
		} else {
			seen[k] = i
		}
	}
	b.fresh = slices.Clone(b.jobs)
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
		created, runAts            = make([]time.Time, n), make([]time.Time, n)
		keys, payloads             = make([]*string, n), make([]*string, n)
		tags, metas                = make([]string, n), make([]string, n)
		traceParents, traceStates  = make([]*string, n), make([]*string, n)
		concurrencyKeys            = make([]*string, n)
		schedules, slots           = make([]*string, n), make([]*time.Time, n)
	)
	for k, i := range idx {
		j := b.jobs[i]
		ids[k], queues[k], kinds[k], states[k] = j.ID, j.Queue, j.Kind, string(j.State)
		prios[k], maxAtt[k] = int32(j.Priority), int32(j.MaxAttempts)
		timeouts[k], bases[k], maxes[k] = j.Timeout.Milliseconds(), j.Backoff.Base.Milliseconds(), j.Backoff.Max.Milliseconds()
		created[k], runAts[k], keys[k], concurrencyKeys[k] = j.CreatedAt, j.RunAt, j.UniqueKey, j.ConcurrencyKey
		if len(j.Payload) > 0 {
			p := string(j.Payload)
			payloads[k] = &p
		}
		t, _ := json.Marshal(j.Tags)
		tags[k], metas[k] = string(t), string(j.Metadata)
		if tr := j.Trace; tr != nil {
			traceParents[k] = &tr.Parent
			if tr.State != "" {
				traceStates[k] = &tr.State
			}
		}
		schedules[k], slots[k] = j.Schedule, j.ScheduledFor
	}
	return []any{created, ids, queues, kinds, states, prios, maxAtt, timeouts, bases, maxes, runAts, keys, tags,
		payloads, metas, traceParents, traceStates, concurrencyKeys, schedules, slots}
}

// insert inserts the batch, and answers each spec whose unique_key an
// unfinished job holds with that job. A holder that finished between the
// conflict and the read frees the key: the spec is inserted again. Jobs
// with unique keys go in (queue, unique_key) order, so two transactions
// inserting the same keys wait for each other instead of deadlocking.
func (b *batch) insert(ctx context.Context, tx pgx.Tx) error {
	pending := b.firsts()
	slices.SortStableFunc(pending, func(x, y int) int {
		kx, ky := b.jobs[x].UniqueKey, b.jobs[y].UniqueKey
		if kx == nil || ky == nil {
			return 0 // keyless jobs hold no lock another insert waits for
		}
		return cmp.Or(cmp.Compare(b.jobs[x].Queue, b.jobs[y].Queue), cmp.Compare(*kx, *ky))
	})
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
		if pending, err = b.takeExisting(ctx, tx, pending, inserted); err != nil {
			return err
		}
		if len(pending) == 0 {
			break // every spec left is answered by its key's holder
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
