package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

var _ store.Insights = (*Store)(nil)

// scanWindow bounds the index entries one filtered list call examines: a
// filter no index serves (a kind, a dead reason, a state in a search) is
// applied to at most this many rows of the index that drives the list, and
// the page's cursor goes on from where the window ended. A rare kind among
// a million jobs then costs a few pages instead of a full scan per request.
const scanWindow = 5000

// scan builds one page of a list driven by an index: the driving
// conditions (served by the index, cursor included) are added first, then
// the filters applied within the window.
type scan struct {
	args   []any
	where  []string // driving conditions
	nWhere int      // how many of args the driving conditions use
	filter []string // conditions applied within the window
	order  string   // the driving index's order, e.g. "id DESC"
	limit  int
	// maxBytes is the page's byte budget (store.Budget); 0: none.
	maxBytes int
	// cursor writes the cursor that continues the list after r.
	cursor func(r *jobRow) string
	// byQueue is set when a queue drives the scan: jobs_queue_id leaves
	// running jobs out (migration 00012), so the window is read in two
	// parts (byQueueSQL).
	byQueue bool
}

// arg adds a parameter and returns its placeholder.
func (q *scan) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// drive adds a driving condition; every one must come before any filter.
func (q *scan) drive(cond string) {
	q.where = append(q.where, cond)
	q.nWhere = len(q.args)
}

func (s *Store) runScan(ctx context.Context, q *scan) (*store.JobPage, error) {
	where := strings.Join(q.where, " AND ")
	whereArgs := q.args[:q.nWhere:q.nWhere]
	// The window's limit follows the driving parameters; the filters'
	// parameters follow it.
	args := append(append(append([]any{}, whereArgs...), scanWindow), q.args[q.nWhere:]...)
	win := "$" + strconv.Itoa(q.nWhere+1)
	filter := make([]string, len(q.filter))
	for i, f := range q.filter {
		filter[i] = shiftPlaceholders(f, q.nWhere)
	}
	filterSQL := "true"
	if len(filter) > 0 {
		filterSQL = strings.Join(filter, " AND ")
	}
	args = append(args, q.limit)
	window := `(SELECT * FROM jobs WHERE ` + where + ` ORDER BY ` + q.order + ` LIMIT ` + win + `)`
	if q.byQueue {
		window = byQueueSQL(where, q.order, win)
	}
	query := `SELECT ` + jobColumns + ` FROM ` + window + ` w WHERE ` + filterSQL +
		` ORDER BY ` + q.order + ` LIMIT $` + strconv.Itoa(len(args))
	budget := store.NewBudget(q.maxBytes)
	rows, list, full, err := s.queryPage(ctx, &budget, query, args...)
	if err != nil {
		return nil, err
	}
	page := &store.JobPage{Jobs: list}
	if full || len(rows) == q.limit {
		page.NextCursor = q.cursor(rows[len(rows)-1])
		return page, nil
	}
	// A short page examined the whole window; if the window was full, the
	// list goes on past its last entry.
	last, err := scanJobs(s.pool.Query(ctx, `SELECT `+jobColumns+` FROM `+window+` w ORDER BY `+q.order+
		` OFFSET `+win+` - 1 LIMIT 1`, append(append([]any{}, whereArgs...), scanWindow)...))
	if err != nil {
		return nil, err
	}
	if len(last) == 1 {
		page.NextCursor = q.cursor(last[0])
	}
	return page, nil
}

// shiftPlaceholders renumbers the placeholders of a filter past the
// window's limit, which sits right after the n driving parameters: $k with
// k > n becomes $k+1.
func shiftPlaceholders(cond string, n int) string {
	var b strings.Builder
	for i := 0; i < len(cond); i++ {
		if cond[i] != '$' {
			b.WriteByte(cond[i])
			continue
		}
		j := i + 1
		for j < len(cond) && cond[j] >= '0' && cond[j] <= '9' {
			j++
		}
		k, err := strconv.Atoi(cond[i+1 : j])
		if err != nil || k <= n {
			b.WriteString(cond[i:j])
		} else {
			b.WriteString("$" + strconv.Itoa(k+1))
		}
		i = j - 1
	}
	return b.String()
}

// uuidZero is the shape of a canonical UUID.
const uuidZero = "00000000-0000-0000-0000-000000000000"

// prefixRange returns the lowest and highest UUIDs that start with prefix
// (lowercase), or false when no canonical UUID can.
func prefixRange(prefix string) (lo, hi string, ok bool) {
	if len(prefix) > len(uuidZero) {
		return "", "", false
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if uuidZero[i] == '-' {
			if c != '-' {
				return "", "", false
			}
			continue
		}
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", "", false
		}
	}
	rest := uuidZero[len(prefix):]
	return prefix + rest, prefix + strings.ReplaceAll(rest, "0", "f"), true
}

// JobSearch drives the search by the primary key (an id prefix, or no
// queue) or by jobs_queue_id (a queue), newest first; state and kind apply
// in the window. A state the counts show no job in (in the queue, if one is
// given) answers at once.
func (s *Store) JobSearch(ctx context.Context, p *store.JobSearchParams) (*store.JobPage, error) {
	q := &scan{order: "id DESC", limit: store.LimitOr(p.Limit, store.DefaultInsightsLimit), maxBytes: p.MaxBytes,
		cursor: func(r *jobRow) string { return r.ID }}
	prefix := strings.ToLower(p.IDPrefix)
	lo, hi, ok := prefixRange(prefix)
	if !ok {
		return &store.JobPage{}, nil // no job id starts with it
	}
	if p.Cursor != "" && !validID(p.Cursor) {
		return &store.JobPage{}, nil
	}
	if p.State != "" {
		var n int64
		err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(n), 0)::bigint FROM (
				SELECT n FROM queue_counts WHERE state = $1 AND ($2 = '' OR queue = $2)
				UNION ALL
				SELECT n FROM queue_count_deltas WHERE state = $1 AND ($2 = '' OR queue = $2)
			) c`, string(p.State), p.Queue).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("search jobs: read counts: %w", err)
		}
		if n == 0 {
			return &store.JobPage{}, nil
		}
	}
	q.drive("true")
	if p.Queue != "" {
		q.drive("queue = " + q.arg(p.Queue))
		q.byQueue = true
	}
	if prefix != "" {
		q.drive("id BETWEEN " + q.arg(lo) + "::uuid AND " + q.arg(hi) + "::uuid")
	}
	if p.Cursor != "" {
		q.drive("id < " + q.arg(p.Cursor) + "::uuid")
	}
	if p.State != "" {
		q.filter = append(q.filter, "state = "+q.arg(string(p.State)))
	}
	if p.Kind != "" {
		q.filter = append(q.filter, "kind = "+q.arg(p.Kind))
	}
	page, err := s.runScan(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("search jobs: %w", err)
	}
	return page, nil
}

// JobListDead reads the dead-letter partial indexes, most recently
// finished first: jobs_dead_kind for a kind (the queue then a filter in the
// window), else jobs_dead_queue for a queue, else jobs_dead; the reason
// filter applies in the window.
func (s *Store) JobListDead(ctx context.Context, p *store.JobListDeadParams) (*store.JobPage, error) {
	q := &scan{order: "finished_at DESC, id DESC", limit: store.LimitOr(p.Limit, store.DefaultInsightsLimit), maxBytes: p.MaxBytes,
		cursor: func(r *jobRow) string { return joinCursor(deref(r.FinishedAt), r.ID) }}
	q.drive("state = 'dead'")
	switch {
	case p.Kind != "":
		q.drive("kind = " + q.arg(p.Kind))
	case p.Queue != "":
		q.drive("queue = " + q.arg(p.Queue))
	}
	if p.Cursor != "" {
		at, id, ok := splitCursor(p.Cursor)
		if !ok {
			return &store.JobPage{}, nil
		}
		q.drive("(finished_at, id) < (" + q.arg(at) + "::timestamptz, " + q.arg(id) + "::uuid)")
	}
	if p.Kind != "" && p.Queue != "" {
		q.filter = append(q.filter, "queue = "+q.arg(p.Queue))
	}
	if p.Reason != "" {
		q.filter = append(q.filter, "dead_reason = "+q.arg(string(p.Reason)))
	}
	page, err := s.runScan(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list dead jobs: %w", err)
	}
	return page, nil
}

// JobListRetrying reads jobs_retrying_queue, soonest run_at first, one
// ordered scan per queue with retrying jobs merged by the outer ORDER BY,
// as the lease merges queues. Across queues the planner would otherwise
// walk jobs_scheduled, whose order is the same, past every job scheduled
// for later with no attempt behind it: it cannot know that they come
// first (200 ms behind 10,000 of them, docs/benchmarks.md). Every condition
// is served by the index, so there is no window.
func (s *Store) JobListRetrying(ctx context.Context, p *store.JobListRetryingParams) (*store.JobPage, error) {
	q := &scan{}
	queues := `SELECT queue FROM (` + countsSQL + `) c WHERE state = 'retrying' AND n > 0`
	if p.Queue != "" {
		queues = `SELECT ` + q.arg(p.Queue) + `::text AS queue`
	}
	after := ""
	if p.Cursor != "" {
		at, id, ok := splitCursor(p.Cursor)
		if !ok {
			return &store.JobPage{}, nil
		}
		after = " AND (run_at, id) > (" + q.arg(at) + "::timestamptz, " + q.arg(id) + "::uuid)"
	}
	limit := store.LimitOr(p.Limit, store.DefaultInsightsLimit)
	lim := q.arg(limit)
	budget := store.NewBudget(p.MaxBytes)
	rows, list, full, err := s.queryPage(ctx, &budget, `SELECT `+prefixColumns(jobColumns, "r.")+` FROM (`+queues+`) q
		CROSS JOIN LATERAL (SELECT * FROM jobs WHERE state = 'scheduled' AND attempt > 0 AND queue = q.queue`+after+`
			ORDER BY run_at, id LIMIT `+lim+`) r
		ORDER BY r.run_at, r.id LIMIT `+lim, q.args...)
	if err != nil {
		return nil, fmt.Errorf("list retrying jobs: %w", err)
	}
	page := &store.JobPage{Jobs: list}
	if full || len(rows) == limit {
		last := rows[len(rows)-1]
		page.NextCursor = joinCursor(last.RunAt, last.ID)
	}
	return page, nil
}

// heldBySilentSQL lists the running jobs of workers last heard from before
// $1, owners in $2 aside, at most $3. Like orphansSQL it starts from the
// workers and reaches their jobs through jobs_running_worker.
var heldBySilentSQL = `SELECT ` + prefixColumns(jobColumns, "j.") + `, w.last_heartbeat_at
	FROM workers w JOIN jobs j ON j.worker_id = w.id AND j.state = 'running'
	WHERE w.last_heartbeat_at < $1 AND w.id <> ALL($2::text[])
	ORDER BY w.last_heartbeat_at, j.id LIMIT $3`

// JobListHeldBySilent costs O(workers + silent workers' jobs), as
// JobListOrphans does.
func (s *Store) JobListHeldBySilent(ctx context.Context, p *store.JobListHeldBySilentParams) ([]store.HeldJob, error) {
	live := p.LiveIDs
	if live == nil {
		live = []string{}
	}
	rows, err := s.pool.Query(ctx, heldBySilentSQL, store.Trunc(p.SilentSince), live,
		store.LimitOr(p.Limit, store.DefaultInsightsLimit))
	if err != nil {
		return nil, fmt.Errorf("list jobs of silent workers: %w", err)
	}
	defer rows.Close()
	out := []store.HeldJob{}
	for rows.Next() {
		r := &jobRow{}
		var hb time.Time
		if err := rows.Scan(append(r.dest(), &hb)...); err != nil {
			return nil, fmt.Errorf("list jobs of silent workers: %w", err)
		}
		out = append(out, store.HeldJob{Job: r.job(), OwnerLastHeartbeatAt: hb.UTC()})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs of silent workers: %w", err)
	}
	return out, nil
}

// RescueList reads the orphaned attempts by attempts_rescued, newest first,
// with the job as it is now (if it is still stored).
func (s *Store) RescueList(ctx context.Context, p *store.RescueListParams) ([]store.Rescue, error) {
	rows, err := s.pool.Query(ctx, `SELECT a.job_id::text, a.attempt, a.worker_id, a.started_at, a.finished_at,
		a.recovered_by, a.last_heartbeat_at, j.queue, j.kind, j.state
		FROM attempts a LEFT JOIN jobs j ON j.id = a.job_id
		WHERE a.outcome = 'orphaned' AND a.finished_at >= $1
		ORDER BY a.finished_at DESC, a.id DESC LIMIT $2`,
		store.Trunc(p.Since), store.LimitOr(p.Limit, store.DefaultInsightsLimit))
	if err != nil {
		return nil, fmt.Errorf("list rescues: %w", err)
	}
	defer rows.Close()
	out := []store.Rescue{}
	for rows.Next() {
		var (
			r                     store.Rescue
			recoveredBy, q, k, st *string
			lastHB                *time.Time
			startedAt, finishedAt time.Time
		)
		if err := rows.Scan(&r.JobID, &r.Attempt, &r.WorkerID, &startedAt, &finishedAt,
			&recoveredBy, &lastHB, &q, &k, &st); err != nil {
			return nil, fmt.Errorf("list rescues: %w", err)
		}
		r.StartedAt, r.RescuedAt = startedAt.UTC(), finishedAt.UTC()
		r.RecoveredBy, r.Queue, r.Kind, r.State = deref(recoveredBy), deref(q), deref(k), store.State(deref(st))
		if lastHB != nil {
			r.LastHeartbeatAt = lastHB.UTC()
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list rescues: %w", err)
	}
	return out, nil
}

// RescueCount groups the newest orphaned attempts by node, reading
// attempts_rescued backwards from the newest.
func (s *Store) RescueCount(ctx context.Context, p *store.RescueCountParams) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT coalesce(recovered_by, ''), count(*) FROM (
			SELECT recovered_by FROM attempts WHERE outcome = 'orphaned' AND finished_at >= $1
			ORDER BY finished_at DESC LIMIT $2) r
		GROUP BY 1`, store.Trunc(p.Since), store.MaxRescuesCounted)
	if err != nil {
		return nil, fmt.Errorf("count rescues: %w", err)
	}
	out := map[string]int64{}
	var node string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&node, &n}, func() error { out[node] = n; return nil }); err != nil {
		return nil, fmt.Errorf("count rescues: %w", err)
	}
	return out, nil
}

// prefixColumns qualifies each column of a comma-separated list.
func prefixColumns(cols, prefix string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// A cursor is "key_id": the sort key of the last entry (Unix milliseconds;
// stored instants are truncated to the millisecond) and its id, which
// breaks ties.
func joinCursor(t time.Time, id string) string {
	return strconv.FormatInt(t.UnixMilli(), 10) + "_" + id
}

// splitCursor reads a cursor; false when it is not one this store wrote.
func splitCursor(c string) (time.Time, string, bool) {
	k, id, _ := strings.Cut(c, "_")
	n, err := strconv.ParseInt(k, 10, 64)
	if err != nil || !validID(id) {
		return time.Time{}, "", false
	}
	return time.UnixMilli(n).UTC(), id, true
}
