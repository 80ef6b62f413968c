package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tetherq/tether/store"
)

// finishedSQL reads the jobs that finished in one minute, by the index of
// finished jobs: its cost follows the minute's throughput. The index's own
// condition is repeated word for word, so that SQLite sees it applies.
const finishedSQL = `SELECT queue, kind, state, run_at, started_at, finished_at FROM jobs INDEXED BY jobs_finished
	WHERE state IN ('succeeded', 'cancelled', 'dead') AND state IN ('succeeded', 'dead')
		AND finished_at >= ? AND finished_at < ? LIMIT ?`

// minutesPruneSQL drops a batch of expired rows, found by the minute index.
const minutesPruneSQL = `DELETE FROM queue_minutes WHERE (queue, minute, kind) IN (
	SELECT queue, minute, kind FROM queue_minutes INDEXED BY queue_minutes_minute WHERE minute < ? LIMIT ?)`

// minutesListSQL reads one range of the primary key, summed per step and
// kind; the histograms' texts are joined, and ParseHistogram adds up the
// buckets that repeat.
const minutesListSQL = `SELECT minute / ? * ? AS minute, kind, sum(succeeded) AS succeeded, sum(dead) AS dead,
		group_concat(wait, ',') AS wait, group_concat(run, ',') AS run FROM queue_minutes
	WHERE queue = ? AND minute >= ? AND minute < ? GROUP BY minute / ?, kind ORDER BY 1, kind`

// QueueMinuteRoll reads the minute's finished jobs on the read pool, then
// replaces the minute's rows and drops expired ones in one write
// transaction.
func (s *Store) QueueMinuteRoll(ctx context.Context, p *store.QueueMinuteRollParams) (int, error) {
	from := toMS(p.Minute) / 60_000 * 60_000
	var rows []struct {
		Queue      string        `db:"queue"`
		Kind       string        `db:"kind"`
		State      string        `db:"state"`
		RunAt      int64         `db:"run_at"`
		StartedAt  sql.NullInt64 `db:"started_at"`
		FinishedAt int64         `db:"finished_at"`
	}
	if err := s.r.SelectContext(ctx, &rows, finishedSQL, from, from+60_000, store.MaxRolledJobs); err != nil {
		return 0, fmt.Errorf("read the jobs finished in a minute: %w", err)
	}
	jobs := make([]store.FinishedJob, len(rows))
	for i, r := range rows {
		jobs[i] = store.FinishedJob{Queue: r.Queue, Kind: r.Kind, State: store.State(r.State), RunAt: fromMS(r.RunAt),
			FinishedAt: fromMS(r.FinishedAt)}
		if r.StartedAt.Valid {
			t := fromMS(r.StartedAt.Int64)
			jobs[i].StartedAt = &t
		}
	}
	rolled := store.RollMinute(fromMS(from), jobs)
	minute, cutoff := from/60_000, toMS(p.Now.Add(-store.DepthRetention))/60_000
	var n int
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM queue_minutes WHERE minute = ?`, minute); err != nil {
			return false, fmt.Errorf("replace a rolled minute: %w", err)
		}
		n = 0
		for _, m := range rolled {
			_, err := tx.ExecContext(ctx, `INSERT INTO queue_minutes (queue, minute, kind, succeeded, dead, wait, run)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, m.Queue, minute, m.Kind, m.Succeeded, m.Dead, m.Wait.String(), m.Run.String())
			if err != nil {
				return false, fmt.Errorf("record a rolled minute: %w", err)
			}
			n++
		}
		res, err := tx.ExecContext(ctx, minutesPruneSQL, cutoff, store.DepthPruneBatch)
		if err != nil {
			return false, fmt.Errorf("drop old rolled minutes: %w", err)
		}
		dropped, err := res.RowsAffected()
		n += int(dropped)
		return false, err
	})
	return n, err
}

// QueueMinuteList reads one range of the primary key, per step
// (minutesListSQL).
func (s *Store) QueueMinuteList(ctx context.Context, p *store.QueueMinuteListParams) ([]store.KindMinute, error) {
	from, to := depthRange(&store.QueueDepthListParams{Since: p.Since, Until: p.Until})
	var rows []struct {
		Minute    int64  `db:"minute"`
		Kind      string `db:"kind"`
		Succeeded int64  `db:"succeeded"`
		Dead      int64  `db:"dead"`
		Wait      string `db:"wait"`
		Run       string `db:"run"`
	}
	step := p.StepMinutes()
	if err := s.r.SelectContext(ctx, &rows, minutesListSQL, step, step, p.Queue, from, to, step); err != nil {
		return nil, fmt.Errorf("list the minutes of %q: %w", p.Queue, err)
	}
	out := make([]store.KindMinute, len(rows))
	for i, r := range rows {
		out[i] = store.KindMinute{Queue: p.Queue, Kind: r.Kind, Minute: fromMS(r.Minute * 60_000), Succeeded: r.Succeeded,
			Dead: r.Dead, Wait: store.ParseHistogram(r.Wait), Run: store.ParseHistogram(r.Run)}
	}
	return out, nil
}
