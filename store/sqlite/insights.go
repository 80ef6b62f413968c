package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

var _ store.Insights = (*Store)(nil)

// scanWindow bounds the index entries one filtered list call examines: a
// filter no index serves (a kind, a dead reason) is applied to at most this
// many rows of the index that drives the list, and the page's cursor goes
// on from where the window ended. A rare kind among a million jobs then
// costs a few pages instead of a full scan per request.
const scanWindow = 5000

// listScan is one page of a list driven by an index, in that index's order,
// with further filters applied to a bounded window of it.
type listScan struct {
	from   string // the table and its index: "jobs INDEXED BY …"
	where  string // the driving condition, cursor included
	args   []any
	order  string // the index's order, e.g. "id DESC"
	keys   string // the columns of the cursor, as "k, id"
	filter string // further conditions ("" for none), applied in the window
	fargs  []any
	limit  int
	// maxBytes is the page's byte budget (store.Budget); 0: none.
	maxBytes int
	// key is an entry's sort key before its id (0 for none); cursor
	// writes the cursor of a key and an id.
	key    func(r *jobRow) int64
	cursor func(k int64, id string) string
}

type scanKey struct {
	K  int64  `db:"k"`
	ID string `db:"id"`
}

func (s *Store) runScan(ctx context.Context, l listScan) (*store.JobPage, error) {
	filter := l.filter
	if filter == "" {
		filter = "1 = 1"
	}
	query := `SELECT ` + jobColumns + ` FROM (SELECT * FROM ` + l.from + ` WHERE ` + l.where +
		` ORDER BY ` + l.order + ` LIMIT ?) WHERE ` + filter + ` ORDER BY ` + l.order + ` LIMIT ?`
	args := append(append(append([]any{}, l.args...), scanWindow), l.fargs...)
	rows, jobs, full, err := s.selectPage(ctx, l.maxBytes, query, append(args, l.limit)...)
	if err != nil {
		return nil, err
	}
	page := &store.JobPage{Jobs: jobs}
	if full || len(rows) == l.limit {
		last := &rows[len(rows)-1]
		page.NextCursor = l.cursor(l.key(last), last.ID)
		return page, nil
	}
	// A short page examined the whole window; if the window was full, the
	// list goes on past its last entry.
	var last scanKey
	err = s.r.GetContext(ctx, &last, `SELECT `+l.keys+` FROM `+l.from+` WHERE `+l.where+
		` ORDER BY `+l.order+` LIMIT 1 OFFSET ?`, append(append([]any{}, l.args...), scanWindow-1)...)
	switch {
	case isNoRows(err):
	case err != nil:
		return nil, err
	default:
		page.NextCursor = l.cursor(last.K, last.ID)
	}
	return page, nil
}

// JobSearch drives the search by the most selective index it has: the
// primary key for an id prefix, else whichever of queue and state holds
// fewer jobs by the maintained counts; the other filters apply in the
// window.
func (s *Store) JobSearch(ctx context.Context, p *store.JobSearchParams) (*store.JobPage, error) {
	prefix := strings.ToLower(p.IDPrefix)
	if strings.Trim(prefix, "0123456789abcdef-") != "" {
		return &store.JobPage{}, nil // no UUID starts with it
	}
	drive, err := s.searchDrive(ctx, p)
	if err != nil || drive == "" {
		return &store.JobPage{}, err
	}
	l := listScan{from: "jobs", order: "id DESC", keys: "0 AS k, id",
		limit: store.LimitOr(p.Limit, store.DefaultInsightsLimit), maxBytes: p.MaxBytes,
		key: func(*jobRow) int64 { return 0 }, cursor: func(_ int64, id string) string { return id }}
	var conds []string
	addFilter := func(col, val string) {
		if val != "" && col != drive {
			conds = append(conds, col+" = ?")
			l.fargs = append(l.fargs, val)
		}
	}
	switch drive {
	case "queue":
		l.from, l.where, l.args = "jobs INDEXED BY jobs_queue_id", "queue = ?", []any{p.Queue}
	case "state":
		l.from, l.where, l.args = "jobs INDEXED BY jobs_state_id", "state = ?", []any{string(p.State)}
	default:
		l.where = "1 = 1"
	}
	if prefix != "" {
		l.where += " AND id >= ? AND id < ?"
		l.args = append(l.args, prefix, prefix+"~") // '~' sorts after every id character
	}
	if p.Cursor != "" {
		l.where += " AND id < ?"
		l.args = append(l.args, p.Cursor)
	}
	addFilter("queue", p.Queue)
	addFilter("state", string(p.State))
	addFilter("kind", p.Kind)
	l.filter = strings.Join(conds, " AND ")
	page, err := s.runScan(ctx, l)
	if err != nil {
		return nil, fmt.Errorf("search jobs: %w", err)
	}
	return page, nil
}

// searchDrive picks the index that drives a search: "id" (the primary key),
// "queue" or "state"; "" when the counts show that nothing can match.
func (s *Store) searchDrive(ctx context.Context, p *store.JobSearchParams) (string, error) {
	if p.IDPrefix != "" || (p.Queue == "" && p.State == "") {
		return "id", nil
	}
	if p.Queue == "" {
		return "state", nil
	}
	if p.State == "" {
		return "queue", nil
	}
	var n struct {
		Queue int64 `db:"q"`
		State int64 `db:"s"`
		Both  int64 `db:"b"`
	}
	err := s.r.GetContext(ctx, &n, `SELECT
		coalesce(sum(CASE WHEN queue = ? THEN n END), 0) AS q,
		coalesce(sum(CASE WHEN state = ? THEN n END), 0) AS s,
		coalesce(sum(CASE WHEN queue = ? AND state = ? THEN n END), 0) AS b
		FROM queue_counts`, p.Queue, string(p.State), p.Queue, string(p.State))
	switch {
	case err != nil:
		return "", fmt.Errorf("read counts: %w", err)
	case n.Both == 0:
		return "", nil
	case n.Queue <= n.State:
		return "queue", nil
	default:
		return "state", nil
	}
}

// JobListDead reads the dead-letter partial indexes, most recently finished
// first: jobs_dead_kind for a kind (the queue then a filter in the window),
// else jobs_dead_queue for a queue, else jobs_dead; the reason filter
// applies in the window.
func (s *Store) JobListDead(ctx context.Context, p *store.JobListDeadParams) (*store.JobPage, error) {
	l := listScan{from: "jobs INDEXED BY jobs_dead", where: "state = 'dead'",
		order: "finished_at DESC, id DESC", keys: "finished_at AS k, id",
		limit: store.LimitOr(p.Limit, store.DefaultInsightsLimit), maxBytes: p.MaxBytes,
		key: func(r *jobRow) int64 { return r.FinishedAt.Int64 }, cursor: joinCursor}
	switch {
	case p.Kind != "":
		l.from, l.where, l.args = "jobs INDEXED BY jobs_dead_kind", "state = 'dead' AND kind = ?", []any{p.Kind}
	case p.Queue != "":
		l.from, l.where, l.args = "jobs INDEXED BY jobs_dead_queue", "state = 'dead' AND queue = ?", []any{p.Queue}
	}
	if p.Cursor != "" {
		k, id := splitCursor(p.Cursor)
		l.where += " AND (finished_at, id) < (?, ?)"
		l.args = append(l.args, k, id)
	}
	var conds []string
	if p.Kind != "" && p.Queue != "" {
		conds = append(conds, "queue = ?")
		l.fargs = append(l.fargs, p.Queue)
	}
	if p.Reason != "" {
		conds = append(conds, "dead_reason = ?")
		l.fargs = append(l.fargs, string(p.Reason))
	}
	l.filter = strings.Join(conds, " AND ")
	page, err := s.runScan(ctx, l)
	if err != nil {
		return nil, fmt.Errorf("list dead jobs: %w", err)
	}
	return page, nil
}

// JobListRetrying reads the retrying partial indexes, soonest run_at first.
func (s *Store) JobListRetrying(ctx context.Context, p *store.JobListRetryingParams) (*store.JobPage, error) {
	from, where := "jobs INDEXED BY jobs_retrying", "state = 'scheduled' AND attempt > 0"
	var args []any
	if p.Queue != "" {
		from, where = "jobs INDEXED BY jobs_retrying_queue", where+" AND queue = ?"
		args = append(args, p.Queue)
	}
	if p.Cursor != "" {
		k, id := splitCursor(p.Cursor)
		where += " AND (run_at, id) > (?, ?)"
		args = append(args, k, id)
	}
	limit := store.LimitOr(p.Limit, store.DefaultInsightsLimit)
	rows, jobs, full, err := s.selectPage(ctx, p.MaxBytes, `SELECT `+jobColumns+` FROM `+from+` WHERE `+where+
		` ORDER BY run_at, id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list retrying jobs: %w", err)
	}
	page := &store.JobPage{Jobs: jobs}
	if full || len(rows) == limit {
		last := rows[len(rows)-1]
		page.NextCursor = joinCursor(last.RunAt, last.ID)
	}
	return page, nil
}

// JobListHeldBySilent starts from the workers' heartbeat index, as
// JobListOrphans does, so it costs O(silent workers + their jobs).
func (s *Store) JobListHeldBySilent(ctx context.Context, p *store.JobListHeldBySilentParams) ([]store.HeldJob, error) {
	query := `SELECT ` + prefixColumns(jobColumns, "j.") + `, w.last_heartbeat_at AS owner_heartbeat_at
		FROM workers w JOIN jobs j ON j.worker_id = w.id AND j.state = 'running'
		WHERE w.last_heartbeat_at < ?`
	args := []any{toMS(p.SilentSince)}
	if len(p.LiveIDs) > 0 {
		query += ` AND w.id NOT IN (` + marks(len(p.LiveIDs)) + `)`
		for _, id := range p.LiveIDs {
			args = append(args, id)
		}
	}
	query += ` ORDER BY w.last_heartbeat_at, j.id LIMIT ?`
	var rows []struct {
		jobRow
		OwnerHB int64 `db:"owner_heartbeat_at"`
	}
	if err := s.r.SelectContext(ctx, &rows, query, append(args, store.LimitOr(p.Limit, store.DefaultInsightsLimit))...); err != nil {
		return nil, fmt.Errorf("list jobs of silent workers: %w", err)
	}
	out := make([]store.HeldJob, len(rows))
	for i := range rows {
		out[i] = store.HeldJob{Job: rows[i].job(), OwnerLastHeartbeatAt: fromMS(rows[i].OwnerHB)}
	}
	return out, nil
}

// RescueList reads the orphaned attempts by their partial index.
func (s *Store) RescueList(ctx context.Context, p *store.RescueListParams) ([]store.Rescue, error) {
	var rows []struct {
		JobID       string         `db:"job_id"`
		Attempt     int            `db:"attempt"`
		WorkerID    string         `db:"worker_id"`
		StartedAt   int64          `db:"started_at"`
		FinishedAt  int64          `db:"finished_at"`
		RecoveredBy sql.NullString `db:"recovered_by"`
		LastHB      sql.NullInt64  `db:"last_heartbeat_at"`
		Queue       sql.NullString `db:"queue"`
		Kind        sql.NullString `db:"kind"`
		State       sql.NullString `db:"state"`
	}
	err := s.r.SelectContext(ctx, &rows, `SELECT a.job_id, a.attempt, a.worker_id, a.started_at, a.finished_at,
		a.recovered_by, a.last_heartbeat_at, j.queue, j.kind, j.state
		FROM attempts a INDEXED BY attempts_rescued LEFT JOIN jobs j ON j.id = a.job_id
		WHERE a.outcome = 'orphaned' AND a.finished_at >= ?
		ORDER BY a.finished_at DESC, a.seq DESC LIMIT ?`,
		toMS(p.Since), store.LimitOr(p.Limit, store.DefaultInsightsLimit))
	if err != nil {
		return nil, fmt.Errorf("list rescues: %w", err)
	}
	out := make([]store.Rescue, len(rows))
	for i, r := range rows {
		out[i] = store.Rescue{
			JobID: r.JobID, Attempt: r.Attempt, Queue: r.Queue.String, Kind: r.Kind.String,
			State: store.State(r.State.String), WorkerID: r.WorkerID, LastHeartbeatAt: fromMS(r.LastHB.Int64),
			StartedAt: fromMS(r.StartedAt), RescuedAt: fromMS(r.FinishedAt), RecoveredBy: r.RecoveredBy.String,
		}
	}
	return out, nil
}

// rescueCountSQL groups the newest orphaned attempts by node, reading
// attempts_rescued backwards from the newest.
const rescueCountSQL = `SELECT coalesce(recovered_by, '') AS node, count(*) AS n FROM (
		SELECT recovered_by FROM attempts INDEXED BY attempts_rescued
		WHERE outcome = 'orphaned' AND finished_at >= ? ORDER BY finished_at DESC LIMIT ?)
	GROUP BY 1`

// RescueCount runs rescueCountSQL.
func (s *Store) RescueCount(ctx context.Context, p *store.RescueCountParams) (map[string]int64, error) {
	var rows []struct {
		Node string `db:"node"`
		N    int64  `db:"n"`
	}
	err := s.r.SelectContext(ctx, &rows, rescueCountSQL, toMS(p.Since), store.MaxRescuesCounted)
	if err != nil {
		return nil, fmt.Errorf("count rescues: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Node] = r.N
	}
	return out, nil
}

// ThroughputList reads the per-minute counts that settling transactions
// keep.
func (s *Store) ThroughputList(ctx context.Context, p *store.ThroughputListParams) ([]store.ThroughputMinute, error) {
	from := p.From.UnixMilli() / 60_000
	to := (p.To.UnixMilli() + 59_999) / 60_000 // the minute holding To starts before it
	from = max(from, to-store.MaxThroughputMinutes)
	if to <= from {
		return []store.ThroughputMinute{}, nil
	}
	var rows []struct {
		Minute  int64  `db:"minute"`
		Outcome string `db:"outcome"`
		N       int64  `db:"n"`
	}
	if err := s.r.SelectContext(ctx, &rows, `SELECT minute, outcome, n FROM throughput
		WHERE minute >= ? AND minute < ?`, from, to); err != nil {
		return nil, fmt.Errorf("read throughput: %w", err)
	}
	out := make([]store.ThroughputMinute, to-from)
	for i := range out {
		out[i].Minute = time.UnixMilli((from + int64(i)) * 60_000).UTC()
	}
	for _, r := range rows {
		m := &out[r.Minute-from]
		switch store.Outcome(r.Outcome) {
		case store.OutcomeSucceeded:
			m.Succeeded += r.N
		case store.OutcomeFailed, store.OutcomeTimedOut:
			m.Failed += r.N
		case store.OutcomeOrphaned:
			m.Rescued += r.N
		}
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

// A cursor is "key_id": the sort key of the last entry (milliseconds) and
// its id, which breaks ties.
func joinCursor(k int64, id string) string { return strconv.FormatInt(k, 10) + "_" + id }

func splitCursor(c string) (int64, string) {
	k, id, _ := strings.Cut(c, "_")
	n, _ := strconv.ParseInt(k, 10, 64)
	return n, id
}
