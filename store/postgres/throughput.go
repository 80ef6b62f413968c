package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// The dashboard's throughput chart is counted from the closed attempts by
// the minute they finished: failures and rescues from the attempts table
// (the attempts_finished index, migration 00003), successes from the
// succeeded jobs, which hold their last attempt themselves (ackSQL; the
// jobs_succeeded_finished index).
// No counter is kept on the write path: a shared per-minute row would
// serialise every ack on its lock. Counting a busy hour on every read would
// cost O(attempts in the window), about a second for a store that closes a
// million attempts an hour (docs/benchmarks.md). So each minute that can no
// longer change is summed once into throughput_minutes (migration 00004) by
// the scheduler's tick (ThroughputRoll), a few minutes a
// tick, and the reader counts from the attempts only the minutes not
// summed yet, a bounded few.

// throughputSettle is how long after a minute ends its count may still
// change: an attempt closes at the instant its request began (the params'
// Now) and commits a moment later. Once the newest closed attempt (or the
// clock, if it is earlier) is this far past a minute's end, the minute is
// settled: the tick sums it, and the reader reads the sum. The tick's clock
// is its Now, the reader's the database's; the scheduler corrects its
// clock to the database's, and where they differ the reader counts a
// minute it does not take as settled from the attempts.
const throughputSettle = time.Minute

// throughputKeep is how long summed minutes are kept: the longest chart,
// a day, past the day of retention.
const throughputKeep = store.ThroughputRetention + store.MaxThroughputMinutes*time.Minute

// throughputSumBatch is how many minutes one tick sums at most. A minute
// of a store closing a million attempts an hour is ≈ 15,000 index entries,
// 2–3 ms to count: a catching-up tick took 8–18 ms (docs/benchmarks.md),
// one with nothing to sum under a millisecond. Steady state
// needs one minute a minute; after an upgrade, or after a time with no
// scheduler, the chart's hour is summed within 12 ticks and the day within
// 288 (about 5 minutes at the default 1 s tick).
const throughputSumBatch = 5

// throughputReadBack is how many settled minutes before the settled edge
// the reader counts from the attempts when they are not summed yet: the
// tick sums a minute within a tick of its settling, so one is enough in
// steady state, and a second covers a slow or failed tick. Older minutes
// not summed yet read as zeros until the ticks reach them.
const throughputReadBack = 2

// newestClosedSQL is the instant the newest closed attempt finished, a
// success's or another's, or NULL before any closed. Each max reads the
// end of an index.
const newestClosedSQL = `greatest((SELECT max(finished_at) FROM attempts),
	(SELECT max(finished_at) FROM jobs WHERE state = 'succeeded'))`

// sumThroughputSQL sums up to $4 settled minutes that throughput_minutes
// does not hold, newest first, within the $3 minutes before the settled
// edge, and drops summed minutes more than $5 ms before the edge. The edge
// is the minute holding (the newest closed attempt, or $1 if earlier) less
// $2 ms: every minute before it is settled. With no attempt, or without
// the lock, there is no edge and the statement does nothing (least would
// skip a NULL newest and take $1). Minutes with no attempt are stored as
// zeros, so that they are not summed again. Each missing minute is counted
// by its own range of attempts_finished, so gaps between them cost
// nothing.
//
// Every replica ticks. The try lock lets one of them sum while the others
// skip at once, so they do not all count the same minutes (a lock that
// waited would hold their ticks behind it). The lock alone is not enough:
// a READ COMMITTED statement takes its snapshot before the lock, so a
// replica that gets the lock just after another committed does not see
// that one's rows and counts the same minutes again. ON CONFLICT DO
// NOTHING then keeps the first sum, and each minute is stored once.
const sumThroughputSQL = `WITH lock AS (
		SELECT pg_try_advisory_xact_lock('throughput_minutes'::regclass::oid::bigint) AS held
	), edge AS (
		SELECT date_bin('1 minute', least(newest, $1) - $2 * interval '1 millisecond', 'epoch') AS settled
		FROM lock, (SELECT ` + newestClosedSQL + ` AS newest) a
		WHERE held AND newest IS NOT NULL
	), missing AS (
		SELECT m FROM edge, generate_series(settled - interval '1 minute', settled - $3 * interval '1 minute',
			interval '-1 minute') m
		WHERE NOT EXISTS (SELECT FROM throughput_minutes t WHERE t.minute = m)
		ORDER BY m DESC LIMIT $4
	), summed AS (
		INSERT INTO throughput_minutes (minute, succeeded, failed, rescued)
		SELECT m, s.n, c.* FROM missing CROSS JOIN LATERAL (
			SELECT count(*) AS n FROM jobs
			WHERE state = 'succeeded' AND finished_at >= m AND finished_at < m + interval '1 minute') s
		CROSS JOIN LATERAL (
			SELECT count(*) FILTER (WHERE outcome IN ('failed', 'timed_out')),
				count(*) FILTER (WHERE outcome = 'orphaned')
			FROM attempts WHERE finished_at >= m AND finished_at < m + interval '1 minute') c
		ON CONFLICT (minute) DO NOTHING
		RETURNING 1
	), dropped AS (
		DELETE FROM throughput_minutes WHERE minute < (SELECT settled FROM edge) - $5 * interval '1 millisecond'
		RETURNING 1
	)
	SELECT (SELECT count(*) FROM summed) + (SELECT count(*) FROM dropped)`

// ThroughputRoll sums settled minutes for the tick at now and drops the
// old ones; see sumThroughputSQL. It runs on the lax pool: a sum lost in a
// crash is missing again, and the next tick sums it.
func (s *Store) ThroughputRoll(ctx context.Context, p *store.ThroughputRollParams) (int, error) {
	var n int
	if err := s.lax.QueryRow(ctx, sumThroughputSQL, sumThroughputArgs(p.Now)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("sum throughput minutes: %w", err)
	}
	return n, nil
}

func sumThroughputArgs(now time.Time) []any {
	return []any{store.Trunc(now), throughputSettle.Milliseconds(), int(store.ThroughputRetention / time.Minute),
		throughputSumBatch, throughputKeep.Milliseconds()}
}

// ThroughputList reads the settled minutes of the window from
// throughput_minutes and counts the last minute or two, and the settled
// minutes of the last throughputReadBack not summed yet, from the
// attempts. It never writes, and never counts more than a few minutes of
// attempts.
//
// What the chart shows: minutes whose attempts were pruned before they
// were summed read as zeros. An attempt that commits more than
// throughputSettle after the instant it closed at, into a minute already
// summed, is not counted. Until the ticks have caught up (right after an
// upgrade, or when no scheduler has run for a while), settled minutes
// older than throughputReadBack that are not summed yet read as zeros: the
// chart fills in from the newest, throughputSumBatch minutes a tick.
func (s *Store) ThroughputList(ctx context.Context, p *store.ThroughputListParams) ([]store.ThroughputMinute, error) {
	from := p.From.UnixMilli() / 60_000
	to := (p.To.UnixMilli() + 59_999) / 60_000 // the minute holding To starts before it
	from = max(from, to-store.MaxThroughputMinutes)
	if to <= from {
		return []store.ThroughputMinute{}, nil
	}
	out := make([]store.ThroughputMinute, to-from)
	for i := range out {
		out[i].Minute = minuteTime(from + int64(i))
	}
	settled, err := s.settledBefore(ctx)
	if err != nil {
		return nil, fmt.Errorf("read throughput: %w", err)
	}
	settled = min(max(settled, from), to)
	held, err := s.readSummed(ctx, out, from, settled)
	if err != nil {
		return nil, fmt.Errorf("read throughput: %w", err)
	}
	lo := settled
	for m := settled - 1; m >= max(from, settled-throughputReadBack); m-- {
		if !held[m-from] {
			lo = m
		}
	}
	counts, err := s.countAttempts(ctx, lo, to)
	if err != nil {
		return nil, fmt.Errorf("read throughput: %w", err)
	}
	for i, c := range counts {
		if m := lo + int64(i); m >= settled || !held[m-from] {
			out[m-from].Succeeded, out[m-from].Failed, out[m-from].Rescued = c.Succeeded, c.Failed, c.Rescued
		}
	}
	return out, nil
}

// settledBefore returns the first minute (in Unix minutes) whose count may
// still change: every minute before it ended throughputSettle or more
// before both the newest closed attempt and the database clock. Before any
// attempt has closed, every minute may still change.
func (s *Store) settledBefore(ctx context.Context) (int64, error) {
	var newest *time.Time
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT `+newestClosedSQL+`, now()`).Scan(&newest, &now); err != nil {
		return 0, err
	}
	if newest == nil {
		return math.MinInt64, nil
	}
	edge := *newest
	if now.Before(edge) {
		edge = now
	}
	return edge.Add(-throughputSettle).UnixMilli() / 60_000, nil
}

// readSummed fills the minutes [from, until) of out, which starts at from,
// from throughput_minutes, and reports which of them it held.
func (s *Store) readSummed(ctx context.Context, out []store.ThroughputMinute, from, until int64) ([]bool, error) {
	held := make([]bool, len(out))
	if until <= from {
		return held, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT minute, succeeded, failed, rescued FROM throughput_minutes
		WHERE minute >= $1 AND minute < $2`, minuteTime(from), minuteTime(until))
	if err != nil {
		return nil, err
	}
	var m store.ThroughputMinute
	_, err = pgx.ForEachRow(rows, []any{&m.Minute, &m.Succeeded, &m.Failed, &m.Rescued}, func() error {
		i := m.Minute.UnixMilli()/60_000 - from
		out[i].Succeeded, out[i].Failed, out[i].Rescued = m.Succeeded, m.Failed, m.Rescued
		held[i] = true
		return nil
	})
	return held, err
}

// countAttempts counts the attempts closed in the minutes [lo, hi), one
// entry a minute from lo (Minute unset), reading the attempts_finished
// index and, for the successes, jobs_succeeded_finished.
func (s *Store) countAttempts(ctx context.Context, lo, hi int64) ([]store.ThroughputMinute, error) {
	if hi <= lo {
		return nil, nil
	}
	out := make([]store.ThroughputMinute, hi-lo)
	rows, err := s.pool.Query(ctx, `SELECT date_bin('1 minute', finished_at, 'epoch'), outcome, count(*)
		FROM attempts
		WHERE finished_at >= $1 AND finished_at < $2 AND outcome IN ('failed', 'timed_out', 'orphaned')
		GROUP BY 1, 2
		UNION ALL
		SELECT date_bin('1 minute', finished_at, 'epoch'), 'succeeded', count(*)
		FROM jobs
		WHERE state = 'succeeded' AND finished_at >= $1 AND finished_at < $2
		GROUP BY 1`, minuteTime(lo), minuteTime(hi))
	if err != nil {
		return nil, err
	}
	var minute time.Time
	var outcome string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&minute, &outcome, &n}, func() error {
		m := &out[minute.UnixMilli()/60_000-lo]
		switch store.Outcome(outcome) {
		case store.OutcomeSucceeded:
			m.Succeeded += n
		case store.OutcomeFailed, store.OutcomeTimedOut:
			m.Failed += n
		case store.OutcomeOrphaned:
			m.Rescued += n
		}
		return nil
	})
	return out, err
}

// minuteTime is the start of a Unix minute.
func minuteTime(m int64) time.Time { return time.UnixMilli(m * 60_000).UTC() }
