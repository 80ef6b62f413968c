package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// ending is one delivery to close: the running row as read (and locked),
// the decision for it, and how its attempt entry reads.
type ending struct {
	by          store.EndedBy
	row         *jobRow
	d           store.Decision
	outcome     store.Outcome
	err         *string
	recoveredBy *string
	lastHB      *time.Time
	// lost marks a delivery taken from its worker, reported at its next
	// heartbeat.
	lost bool
}

func decide(row *jobRow, e store.Ending, retryIn *time.Duration, maxRescues int, now time.Time) store.Decision {
	return store.Decide(store.DecideParams{
		Ending:          e,
		Attempt:         row.Attempt,
		MaxAttempts:     row.MaxAttempts,
		Rescues:         row.Rescues,
		MaxRescues:      maxRescues,
		CancelRequested: row.CancelRequested,
		Backoff:         store.Backoff{Base: millis(row.BackoffBaseMS), Max: millis(row.BackoffMaxMS)},
		RetryIn:         retryIn,
		RunAt:           row.RunAt,
		Now:             now,
	})
}

// endSQL applies many decisions in one statement: $2… are the columns of
// the decisions. The update is guarded again on (id, owner, token,
// running), so a delivery another transaction closed first is left alone,
// and each closed attempt is copied to history in the same statement: the
// update returns what the history needs beside the row, so the history is
// no second join of the decisions. It is planned at every execution
// (planPerCall): a cached generic plan guesses ten decisions, and with
// statistics that have not seen a burst of leases it joined the rows found
// to the decisions by a filter in a nested loop, quadratic in the batch.
const endSQL = `WITH ended AS (
		UPDATE jobs j SET state = d.state, attempt = d.attempt, rescues = d.rescues, run_at = d.run_at,
			dead_reason = d.dead_reason, finished_at = CASE WHEN d.finished THEN $1::timestamptz END,
			last_error = coalesce(d.error, j.last_error), expires_at = NULL, ended_by = d.ended_by
		FROM unnest($2::uuid[], $3::text[], $4::text[], $5::int[], $6::int[], $7::timestamptz[],
			$8::text[], $9::boolean[], $10::text[], $11::int[], $12::text[], $13::text[], $14::timestamptz[],
			$15::boolean[], $16::text[], $17::text[])
			AS d(id, token, state, attempt, rescues, run_at, dead_reason, finished, error, old_attempt, outcome,
			recovered_by, last_hb, lost, owner, ended_by)
		WHERE j.id = ANY($2::uuid[]) AND j.id = d.id AND j.worker_id = d.owner AND j.token = d.token
			AND j.state = 'running'
		RETURNING j.*, d.old_attempt AS h_attempt, d.outcome AS h_outcome, d.error AS h_error,
			d.recovered_by AS h_recovered_by, d.last_hb AS h_last_hb, d.lost AS h_lost
	), history AS (
		INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome, error,
			recovered_by, last_heartbeat_at, lost_pending)
		SELECT attempt_id, id, h_attempt, worker_id, started_at, $1, h_outcome, h_error,
			h_recovered_by, h_last_hb, CASE WHEN h_lost THEN true END
		FROM ended
	)
	SELECT ` + jobColumns + ` FROM ended`

// planPerCall has Postgres plan a statement for the arguments of each
// execution: pgx sends it unnamed, after the first time with the parameter
// types it cached, so the plan knows how long each list is.
const planPerCall = pgx.QueryExecModeCacheDescribe

// endDeliveries closes the deliveries of ends with their decisions at now
// and returns the jobs after, in the order of ends. The rows must be locked
// by the caller's transaction, so every guard holds.
func endDeliveries(ctx context.Context, q querier, ends []ending, now time.Time) ([]*store.Job, error) {
	if len(ends) == 0 {
		return nil, nil
	}
	n := len(ends)
	var (
		ids, tokens, states, outcomes = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		owners, by                    = make([]string, n), make([]string, n)
		attempts, rescues, olds       = make([]int32, n), make([]int32, n), make([]int32, n)
		runAts                        = make([]time.Time, n)
		reasons, errs, recoveredBy    = make([]*string, n), make([]*string, n), make([]*string, n)
		finished, lost                = make([]bool, n), make([]bool, n)
		lastHBs                       = make([]*time.Time, n)
	)
	for i, e := range ends {
		ids[i], tokens[i], states[i], outcomes[i] = e.row.ID, deref(e.row.Token), string(e.d.State), string(e.outcome)
		owners[i], by[i] = deref(e.row.WorkerID), string(e.by)
		attempts[i], rescues[i], olds[i] = int32(e.d.Attempt), int32(e.d.Rescues), int32(e.row.Attempt)
		// A job back in the queue waits from the decision's run_at: its
		// run_at says when it became leasable again.
		runAts[i] = e.row.RunAt
		if !e.d.State.Finished() {
			runAts[i] = store.Trunc(e.d.RunAt)
		}
		if e.d.DeadReason != nil {
			r := string(*e.d.DeadReason)
			reasons[i] = &r
		}
		errs[i], recoveredBy[i], lastHBs[i] = e.err, e.recoveredBy, e.lastHB
		finished[i], lost[i] = e.d.State.Finished(), e.lost
	}
	rows, err := scanJobs(q.Query(ctx, endSQL, planPerCall, now, ids, tokens, states, attempts, rescues, runAts, reasons,
		finished, errs, olds, outcomes, recoveredBy, lastHBs, lost, owners, by))
	if err != nil {
		return nil, fmt.Errorf("end %d deliveries: %w", n, err)
	}
	if len(rows) != n {
		return nil, fmt.Errorf("end %d deliveries: %d matched their lease", n, len(rows))
	}
	byID := make(map[string]*jobRow, n)
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]*store.Job, n)
	for i, id := range ids {
		out[i] = byID[id].job()
	}
	return out, nil
}
