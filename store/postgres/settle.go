package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// ackSQL settles every (id, token) of the arrays $2, $3 that is a running
// job's current lease as succeeded at $1 (one instant per pair: merged
// callers each bring their own) with result $4, in one statement. Pairs
// that match nothing (stale tokens, unknown ids, repeats) are left out of
// RETURNING, which names each pair that settled by its position in the
// arrays (1-based), for the caller to tell the rest apart.
//
// A success writes no history row: it is a job's last attempt, and the
// succeeded row keeps every fact of it (attempt_id, attempt, worker_id,
// started_at, finished_at), so readers take it from there (getJob,
// throughput.go). That row would be a heap tuple and two index entries per
// job, a third of what an ack wrote.
//
// The join drives from the arrays, one primary-key probe per pair. An
// added "j.id = ANY($2)" (the lease's way of pinning the primary key) let
// the planner AND it with jobs_running_expiry, whose dead entries it then
// read on every ack until vacuum removed them: 2.7 times the execution
// time of this form with 30,000 jobs behind. The state is checked against
// stillRunning for the same reason.
const ackSQL = `UPDATE jobs j SET state = 'succeeded', finished_at = a.at, result = a.result::jsonb, expires_at = NULL
	FROM unnest($1::timestamptz[], $2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS a(at, id, token, result, n)
	WHERE j.id = a.id AND j.token = a.token AND j.state = ` + stillRunning + `
	RETURNING a.n`

// JobAck settles a job as succeeded through the same merged statement as
// ack-only settles (ackSQL, so the fencing rule has one text), then reads
// the job back for the answer.
func (s *Store) JobAck(ctx context.Context, p *store.JobAckParams) (*store.Job, error) {
	if !validID(p.ID) {
		return nil, store.ErrNotFound
	}
	settled, err := s.acks.settle(ctx, s.pool, []store.JobAckParams{*p}, store.Trunc(p.Now))
	if err != nil {
		return nil, fmt.Errorf("ack %s: %w", p.ID, err)
	}
	row, err := getRow(ctx, s.pool, p.ID)
	if err != nil {
		return nil, err
	}
	// Settled now, or a repeat under the token that settled it: answered
	// with the job. Anything else is a stale holder.
	if settled[0] || (row.State == string(store.StateSucceeded) && deref(row.Token) == p.Token) {
		return row.job(), nil
	}
	return nil, store.ErrLeaseLost
}

// ackMany runs ackSQL over the acks of calls, each at its call's instant,
// and sets each call's settled: one flag per ack, true for those that
// settled a job now.
func ackMany(ctx context.Context, q querier, calls []*ackCall) error {
	var ats []time.Time
	var ids [][16]byte
	var tokens []string
	var results []*string
	var at []*bool // the flag of each pair sent, by position
	for _, c := range calls {
		c.settled = make([]bool, len(c.acks))
		for i, a := range c.acks {
			id, ok := parseID(a.ID)
			if !ok {
				continue
			}
			ats, ids, tokens = append(ats, c.now), append(ids, id), append(tokens, a.Token)
			var r *string
			if len(a.Result) > 0 {
				v := string(a.Result)
				r = &v
			}
			results = append(results, r)
			at = append(at, &c.settled[i])
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, ackSQL, ats, ids, tokens, results)
	if err != nil {
		return fmt.Errorf("ack %d jobs: %w", len(ids), err)
	}
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&n}, func() error {
		if n < 1 || n > int64(len(at)) {
			return fmt.Errorf("ack returned position %d of %d", n, len(at))
		}
		*at[n-1] = true
		return nil
	}); err != nil {
		return fmt.Errorf("ack %d jobs: %w", len(ids), err)
	}
	return nil
}

// JobSettle acks, then fails, many jobs: the acks in one statement (the
// whole call when there are no fails), the fails in one read and one
// write, all in one transaction.
func (s *Store) JobSettle(ctx context.Context, p *store.JobSettleParams) ([]error, error) {
	now := store.Trunc(p.Now)
	results := make([]error, 0, len(p.Acks)+len(p.Fails))
	if len(p.Fails) == 0 {
		settled, err := s.acks.settle(ctx, s.pool, p.Acks, now)
		if err != nil {
			return nil, err
		}
		return results, ackResults(ctx, s.pool, p.Acks, settled, &results)
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		results = results[:0]
		c := &ackCall{acks: p.Acks, now: now}
		if err := ackMany(ctx, tx, []*ackCall{c}); err != nil {
			return err
		}
		if err := ackResults(ctx, tx, p.Acks, c.settled, &results); err != nil {
			return err
		}
		fails := make([]store.JobFailParams, len(p.Fails))
		for i, f := range p.Fails {
			f.Now = now
			fails[i] = f
		}
		_, errs, err := failMany(ctx, tx, fails, now)
		results = append(results, errs...)
		return err
	})
	return results, err
}

// ackResults appends one result per ack: ok for those settled now, and for
// the rest ok (a repeat under the settling token), ErrLeaseLost or
// ErrNotFound, read in one query. settled holds a flag per ack (ackMany).
func ackResults(ctx context.Context, q querier, acks []store.JobAckParams, settled []bool, results *[]error) error {
	var missed []string
	for i, a := range acks {
		if !settled[i] && validID(a.ID) {
			missed = append(missed, a.ID)
		}
	}
	rows, err := readRows(ctx, q, missed, false)
	if err != nil {
		return err
	}
	for i, a := range acks {
		if settled[i] {
			*results = append(*results, nil)
			continue
		}
		// Not settled by this ack: a repeat of one that settled the job
		// (in this call, in a merged one or before) under the same token,
		// a stale token, or no such job.
		switch row, found := rows[a.ID]; {
		case !found:
			*results = append(*results, store.ErrNotFound)
		case row.State == string(store.StateSucceeded) && deref(row.Token) == a.Token:
			*results = append(*results, nil)
		default:
			*results = append(*results, store.ErrLeaseLost)
		}
	}
	return nil
}

// JobFail ends a delivery as failed and applies the failure decisions.
func (s *Store) JobFail(ctx context.Context, p *store.JobFailParams) (*store.Job, error) {
	var j *store.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		done, errs, err := failMany(ctx, tx, []store.JobFailParams{*p}, store.Trunc(p.Now))
		if err != nil {
			return err
		}
		if errs[0] != nil {
			return errs[0]
		}
		j = done[0]
		return nil // ended now, or a repeat of the fail that ended it
	})
	return j, err
}

// failMany ends the deliveries of fails (each under its token) with the
// failure decisions. It returns one job and one result per fail: the job
// it ended, or as it is for a fail repeated under the token whose delivery
// a fail already ended.
func failMany(ctx context.Context, tx pgx.Tx, fails []store.JobFailParams, now time.Time) ([]*store.Job, []error, error) {
	errs := make([]error, len(fails))
	ids := make([]string, 0, len(fails))
	for _, f := range fails {
		if validID(f.ID) {
			ids = append(ids, f.ID)
		}
	}
	rows, err := readRows(ctx, tx, ids, true)
	if err != nil {
		return nil, nil, err
	}
	var ends []ending
	var ended []int // the fail of each ending
	jobs := make([]*store.Job, len(fails))
	seen := map[string]bool{}
	for i, f := range fails {
		row, ok := rows[f.ID]
		switch {
		case !ok:
			errs[i] = store.ErrNotFound
		case !seen[f.ID] && row.endedBy(f.Token, store.EndedByFail):
			jobs[i] = row.job()
		case seen[f.ID] || row.State != string(store.StateRunning) || deref(row.Token) != f.Token:
			errs[i] = store.ErrLeaseLost
		default:
			seen[f.ID] = true
			kind := store.EndFail
			if f.NoRetry {
				kind = store.EndFailPermanent
			}
			d := decide(row, kind, f.RetryIn, 0, now)
			msg := f.Error
			ends = append(ends, ending{by: store.EndedByFail, row: row, d: d, outcome: d.Outcome, err: &msg})
			ended = append(ended, i)
		}
	}
	done, err := endDeliveries(ctx, tx, ends, now)
	if err != nil {
		return nil, nil, err
	}
	for k, i := range ended {
		jobs[i] = done[k]
	}
	return jobs, errs, nil
}

// stillRunning is the state a statement that finds jobs by id alone
// compares theirs with: 'running', as a subquery's value, which the planner
// cannot see. Compared with the constant, the state implies the predicate
// of the partial indexes on running jobs, and the planner may probe
// jobs_running_worker (worker_id, id) for an id: a scan of that whole index,
// dead entries included, for every id. Its generic plans did so when the
// statistics had seen few running jobs: an ack of 100 jobs then cost its
// backend twice the CPU (93 against 47 us a job, one worker). With no
// partial index to use, the primary key is the way in.
const stillRunning = `(SELECT 'running'::text)`

// extendSQL pushes the expiry of job $4 under token $5 to $1 + $2 ms (its
// timeout when $2 is null), records progress $3 and the worker's sign of
// life.
const extendSQL = `WITH extended AS (
		UPDATE jobs SET expires_at = $1::timestamptz + coalesce($2::bigint, timeout_ms) * interval '1 millisecond',
			progress = coalesce($3, progress)
		WHERE id = $4 AND token = $5 AND state = ` + stillRunning + ` RETURNING *
	), worker AS (
		UPDATE workers SET last_heartbeat_at = $1 WHERE id = (SELECT worker_id FROM extended)
	)
	SELECT ` + jobColumns + ` FROM extended`

// JobExtend pushes a running job's expiry and records progress; it counts
// as the worker's sign of life.
func (s *Store) JobExtend(ctx context.Context, p *store.JobExtendParams) (*store.Job, error) {
	if !validID(p.ID) {
		return nil, store.ErrNotFound
	}
	now := store.Trunc(p.Now)
	var extend *int64
	if p.Extend > 0 {
		v := p.Extend.Milliseconds()
		extend = &v
	}
	rows, err := scanJobs(s.lax.Query(ctx, extendSQL, now, extend, p.Progress, p.ID, p.Token))
	if err != nil {
		return nil, fmt.Errorf("extend %s: %w", p.ID, err)
	}
	if len(rows) == 0 {
		return nil, lostOrMissing(ctx, s.pool, p.ID)
	}
	return rows[0].job(), nil
}

// JobRelease gives a running job back: attempt − 1, available or scheduled.
func (s *Store) JobRelease(ctx context.Context, p *store.JobReleaseParams) (*store.Job, error) {
	if !validID(p.ID) {
		return nil, store.ErrNotFound
	}
	now := store.Trunc(p.Now)
	var j *store.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := readRows(ctx, tx, []string{p.ID}, true)
		if err != nil {
			return err
		}
		row, ok := rows[p.ID]
		if !ok {
			return store.ErrNotFound
		}
		if row.endedBy(p.Token, store.EndedByRelease) {
			j = row.job() // a repeat of the release that ended this delivery
			return nil
		}
		if row.State != string(store.StateRunning) || deref(row.Token) != p.Token {
			return store.ErrLeaseLost
		}
		d := decide(row, store.EndRelease, &p.Delay, 0, now)
		done, err := endDeliveries(ctx, tx, []ending{{by: store.EndedByRelease, row: row, d: d, outcome: d.Outcome}}, now)
		if err != nil {
			return err
		}
		j = done[0]
		return nil
	})
	return j, err
}

// lostOrMissing tells ErrNotFound from ErrLeaseLost after a guarded write
// matched nothing.
func lostOrMissing(ctx context.Context, q querier, id string) error {
	if _, err := getRow(ctx, q, id); err != nil {
		return err
	}
	return store.ErrLeaseLost
}

// getRow reads one job row. Returns ErrNotFound.
func getRow(ctx context.Context, q querier, id string) (*jobRow, error) {
	if !validID(id) {
		return nil, store.ErrNotFound
	}
	r := &jobRow{}
	err := q.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id).Scan(r.dest()...)
	if isNoRows(err) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", id, err)
	}
	return r, nil
}

// readRows reads the rows of ids by id, locking them for the transaction
// when lock is set (in id order, so two transactions locking overlapping
// sets cannot deadlock).
func readRows(ctx context.Context, q querier, ids []string, lock bool) (map[string]*jobRow, error) {
	out := map[string]*jobRow{}
	if len(ids) == 0 {
		return out, nil
	}
	query := `SELECT ` + jobColumns + ` FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id`
	if lock {
		query += ` FOR UPDATE`
	}
	rows, err := scanJobs(q.Query(ctx, query, ids))
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}
