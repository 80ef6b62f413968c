package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// finishedSQL reads the jobs that finished in one minute, by the indexes
// of finished jobs: its cost follows the minute's throughput. One branch
// per index, each with a condition its partial index's implies: with
// state IN ('succeeded', 'dead') no index applies, and Postgres scanned
// the whole table (0.7 s at a million jobs).
const finishedSQL = `SELECT * FROM (
		(SELECT queue, kind, state, run_at, started_at, finished_at FROM jobs
			WHERE state = 'succeeded' AND finished_at >= $1 AND finished_at < $2 LIMIT $3)
		UNION ALL
		(SELECT queue, kind, state, run_at, started_at, finished_at FROM jobs
			WHERE state = 'dead' AND finished_at >= $1 AND finished_at < $2 LIMIT $3)
	) f LIMIT $3`

// minutesWriteSQL replaces a minute's rows (from arrays; the rows of kinds
// no longer in it deleted, the others upserted, so that no row is touched
// twice), rewrites the rows of its hour of the (queue, kind) pairs it had
// or has from the hour's minutes (migration 00013; at most 60 rows a pair;
// the statement's parts see the tables as they were before it, so the
// minute's new rows are read from the arrays), and drops expired minutes
// and hours, in one statement.
const minutesWriteSQL = `WITH new AS (
		SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[])
			AS u (queue, kind, succeeded, dead, wait, run)
	), cleared AS (
		DELETE FROM queue_minutes WHERE minute = $1 AND (queue, kind) NOT IN (SELECT queue, kind FROM new)
	), written AS (
		INSERT INTO queue_minutes (queue, minute, kind, succeeded, dead, wait, run)
		SELECT queue, $1, kind, succeeded, dead, wait, run FROM new
		ON CONFLICT (queue, minute, kind) DO UPDATE SET succeeded = excluded.succeeded, dead = excluded.dead,
			wait = excluded.wait, run = excluded.run
		RETURNING 1
	), pairs AS (
		SELECT queue, kind FROM new UNION SELECT queue, kind FROM queue_minutes WHERE minute = $1
	), summed AS (
		SELECT queue, kind, sum(succeeded)::bigint AS succeeded, sum(dead)::bigint AS dead,
			string_agg(wait, ',' ORDER BY minute) AS wait, string_agg(run, ',' ORDER BY minute) AS run FROM (
			SELECT m.queue, m.minute, m.kind, m.succeeded, m.dead, m.wait, m.run FROM pairs p
				JOIN queue_minutes m ON m.queue = p.queue AND m.kind = p.kind
				WHERE m.minute >= $10::timestamptz AND m.minute < $10::timestamptz + interval '1 hour' AND m.minute <> $1
			UNION ALL
			SELECT queue, $1::timestamptz, kind, succeeded, dead, wait, run FROM new
		) m GROUP BY queue, kind
	), hours AS (
		INSERT INTO queue_minute_hours (queue, hour, kind, succeeded, dead, wait, run)
		SELECT queue, $10::timestamptz, kind, succeeded, dead, wait, run FROM summed
		ON CONFLICT (queue, hour, kind) DO UPDATE SET succeeded = excluded.succeeded, dead = excluded.dead,
			wait = excluded.wait, run = excluded.run
	), hours_cleared AS (
		DELETE FROM queue_minute_hours WHERE hour = $10::timestamptz
			AND (queue, kind) IN (SELECT queue, kind FROM pairs) AND (queue, kind) NOT IN (SELECT queue, kind FROM summed)
	), dropped AS (
		DELETE FROM queue_minutes WHERE (queue, minute, kind) IN (
			SELECT queue, minute, kind FROM queue_minutes WHERE minute < $8 LIMIT $9)
		RETURNING 1
	), dropped_hours AS (
		DELETE FROM queue_minute_hours WHERE (queue, hour, kind) IN (
			SELECT queue, hour, kind FROM queue_minute_hours WHERE hour <= $8::timestamptz - interval '1 hour' LIMIT $9)
	)
	SELECT (SELECT count(*) FROM written) + (SELECT count(*) FROM dropped)`

// QueueMinuteRoll reads the minute's finished jobs, then writes its rows
// on the lax pool: a roll lost in a crash is a missing minute.
func (s *Store) QueueMinuteRoll(ctx context.Context, p *store.QueueMinuteRollParams) (int, error) {
	from := p.Minute.UTC().Truncate(time.Minute)
	rows, err := s.pool.Query(ctx, finishedSQL, from, from.Add(time.Minute), store.MaxRolledJobs)
	if err != nil {
		return 0, fmt.Errorf("read the jobs finished in a minute: %w", err)
	}
	var jobs []store.FinishedJob
	var j store.FinishedJob
	var state string
	var started *time.Time
	_, err = pgx.ForEachRow(rows, []any{&j.Queue, &j.Kind, &state, &j.RunAt, &started, &j.FinishedAt}, func() error {
		j.State, j.StartedAt = store.State(state), nil
		if started != nil {
			t := *started
			j.StartedAt = &t
		}
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read the jobs finished in a minute: %w", err)
	}
	rolled := store.RollMinute(from, jobs)
	qs, ks, ws, rs := []string{}, []string{}, []string{}, []string{}
	ss, ds := []int64{}, []int64{}
	for _, m := range rolled {
		qs, ks, ss, ds = append(qs, m.Queue), append(ks, m.Kind), append(ss, m.Succeeded), append(ds, m.Dead)
		ws, rs = append(ws, m.Wait.String()), append(rs, m.Run.String())
	}
	var n int
	err = s.lax.QueryRow(ctx, minutesWriteSQL, from, qs, ks, ss, ds, ws, rs,
		p.Now.Add(-store.DepthRetention), store.DepthPruneBatch, from.Truncate(time.Hour)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("record a rolled minute: %w", err)
	}
	return n, nil
}

// QueueMinuteList reads the hours the range holds whole from
// queue_minute_hours when the step is a whole number of hours, and the
// rest from queue_minutes (see store.WholeHours): each one range of a primary
// key.
func (s *Store) QueueMinuteList(ctx context.Context, p *store.QueueMinuteListParams) ([]store.KindMinute, error) {
	from := later(p.Since.UTC().Truncate(time.Minute), p.Until.Add(-time.Duration(store.MaxDepthMinutes)*time.Minute))
	h0, h1 := store.WholeHours(from, p.Until, p.StepMinutes())
	// Summed per step and kind; the histograms' texts are joined, and
	// ParseHistogram adds up the buckets that repeat.
	rows, err := s.pool.Query(ctx, `SELECT to_timestamp(extract(epoch FROM t)::bigint / (60 * $4::bigint) * 60 * $4::bigint),
			kind, sum(succeeded)::bigint, sum(dead)::bigint, string_agg(wait, ','), string_agg(run, ',') FROM (
			SELECT hour AS t, kind, succeeded, dead, wait, run FROM queue_minute_hours WHERE queue = $1 AND hour >= $5 AND hour < $6
			UNION ALL
			SELECT minute, kind, succeeded, dead, wait, run FROM queue_minutes WHERE queue = $1 AND minute >= $2 AND minute < $5
			UNION ALL
			SELECT minute, kind, succeeded, dead, wait, run FROM queue_minutes WHERE queue = $1 AND minute >= $6 AND minute < $3
		) r GROUP BY 1, kind ORDER BY 1, kind`, p.Queue, from, p.Until, p.StepMinutes(), h0, h1)
	if err != nil {
		return nil, fmt.Errorf("list the minutes of %q: %w", p.Queue, err)
	}
	out := []store.KindMinute{}
	var m store.KindMinute
	var wait, run string
	_, err = pgx.ForEachRow(rows, []any{&m.Minute, &m.Kind, &m.Succeeded, &m.Dead, &wait, &run}, func() error {
		out = append(out, store.KindMinute{Queue: p.Queue, Kind: m.Kind, Minute: m.Minute.UTC(), Succeeded: m.Succeeded,
			Dead: m.Dead, Wait: store.ParseHistogram(wait), Run: store.ParseHistogram(run)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the minutes of %q: %w", p.Queue, err)
	}
	return out, nil
}
