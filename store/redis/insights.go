package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
)

var _ store.Insights = (*Store)(nil)

// Insights keys, beside those of redis.go:
//
//	tp:<minute>   hash: attempts closed in the minute starting at <minute> (ms):
//	              s succeeded, f failed or timed out, r rescued; written by
//	              lib_ack.lua and lib_end.lua, expiring after 25 hours
//	rescues       zset: recent rescues (JSON entries) by rescue time, the
//	              newest 10000 kept; written by recover.lua

// insightsBatch bounds the index entries one list call examines: a filter
// no index serves (a dead reason, an attempt) is applied to at most this
// many entries, and the page's cursor goes on from where they ended.
const insightsBatch = 1000

func insightsLimit(n int) int { return store.LimitOr(n, store.DefaultInsightsLimit) }

// JobListDead lists dead jobs newest finished first, from the per-queue
// dead sets, or with a kind from the per-queue dead sets of that kind
// (lib_job.lua's dkkey): a kind no dead job has is an empty read, however
// many dead jobs other kinds have. Only a dead reason is a filter the sets
// do not serve, applied to a window of insightsBatch entries; without one,
// every entry matches, and each queue need offer no more entries than the
// page holds (and the cursor's own entry, read again).
func (s *Store) JobListDead(ctx context.Context, p *store.JobListDeadParams) (*store.JobPage, error) {
	limit := insightsLimit(p.Limit)
	z := zlist{name: "dead", set: "dead", desc: true, state: string(store.StateDead), batch: limit + 1,
		kind: p.Kind, reason: string(p.Reason)}
	if p.Kind != "" {
		z.set = "dk:" + p.Kind
	}
	if p.Reason != "" {
		z.batch = max(limit, insightsBatch)
	}
	return s.zpage(ctx, &z, p.Queue, p.Cursor, limit, p.MaxBytes)
}

// JobListRetrying lists scheduled jobs with attempt > 0, soonest run_at
// first, from the per-queue retry sets (retryindex.go). They hold only
// retrying jobs, so a page is full while any are left, however many jobs
// are scheduled for later before them, and each queue need offer no more
// entries than the page holds (and the cursor's own entry, read again).
func (s *Store) JobListRetrying(ctx context.Context, p *store.JobListRetryingParams) (*store.JobPage, error) {
	limit := insightsLimit(p.Limit)
	z := zlist{name: "retrying", set: "retry", batch: limit + 1, retrying: true}
	return s.zpage(ctx, &z, p.Queue, p.Cursor, limit, p.MaxBytes)
}

// zlist is what zpage.lua reads: a per-queue sorted set and the filters
// applied to its entries' jobs.
type zlist struct {
	name  string // for errors
	set   string // the set's key suffix
	desc  bool   // highest score first
	state string // the state the set holds, checked again on each job ("": none)
	// batch is how many entries of each queue's set one call examines.
	batch        int
	kind, reason string // "": any
	retrying     bool   // keep only retrying jobs
}

// zpage runs zpage.lua once: up to z.batch entries of each queue's set, at
// most limit matches, at most maxBytes of them (store.Budget). The cursor is
// "<score>:<id>" of the last entry examined.
func (s *Store) zpage(ctx context.Context, z *zlist, queue, cursor string, limit, maxBytes int) (*store.JobPage, error) {
	cscore, cid := "", ""
	if cursor != "" {
		var ok bool
		cscore, cid, ok = strings.Cut(cursor, ":")
		if !ok || cscore == "" {
			return nil, fmt.Errorf("list %s: bad cursor %q", z.name, cursor)
		}
	}
	v, err := s.call(ctx, "zpage", z.set, flag(z.desc), queue, cscore, cid, z.batch, limit,
		z.kind, z.reason, flag(z.retrying), maxBytes, z.state)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", z.name, err)
	}
	r := asSlice(v)
	jobs, err := decodeJobs(r[0])
	if err != nil {
		return nil, err
	}
	page := &store.JobPage{Jobs: jobs}
	if done, _ := r[3].(int64); done != 1 {
		page.NextCursor = asString(r[1]) + ":" + asString(r[2])
	}
	return page, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// JobSearch lists jobs newest first from the per-queue id indexes; an id
// prefix narrows the range of ids read.
func (s *Store) JobSearch(ctx context.Context, p *store.JobSearchParams) (*store.JobPage, error) {
	limit := insightsLimit(p.Limit)
	prefix := strings.ToLower(p.IDPrefix)
	if strings.Trim(prefix, "0123456789abcdef-") != "" {
		return &store.JobPage{Jobs: []*store.Job{}}, nil // no id starts with it
	}
	v, err := s.call(ctx, "list", p.Queue, string(p.State), p.Kind, p.Cursor, max(limit, insightsBatch), limit, prefix,
		p.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("search jobs: %w", err)
	}
	r := asSlice(v)
	jobs, err := decodeJobs(r[0])
	if err != nil {
		return nil, err
	}
	page := &store.JobPage{Jobs: jobs}
	if done, _ := r[2].(int64); done != 1 {
		page.NextCursor = asString(r[1])
	}
	return page, nil
}

// JobListHeldBySilent lists running jobs of owners silent since
// p.SilentSince, from the set of workers holding jobs.
func (s *Store) JobListHeldBySilent(ctx context.Context, p *store.JobListHeldBySilentParams) ([]store.HeldJob, error) {
	args := []any{unixMS(p.SilentSince), insightsLimit(p.Limit)}
	for _, id := range p.LiveIDs {
		args = append(args, id)
	}
	v, err := s.call(ctx, "held", args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs held by silent workers: %w", err)
	}
	rows := asSlice(v)
	out := make([]store.HeldJob, 0, len(rows))
	for _, row := range rows {
		r := asSlice(row)
		j, _, err := decodeJob(r[0])
		if err != nil {
			return nil, err
		}
		out = append(out, store.HeldJob{Job: j, OwnerLastHeartbeatAt: msTime(asString(r[1]))})
	}
	return out, nil
}

// rescueEntry is an entry of the rescues index, as recover.lua writes it.
type rescueEntry struct {
	JobID       string `json:"j"`
	Attempt     string `json:"n"`
	WorkerID    string `json:"w"`
	StartedAt   string `json:"s"`
	RescuedAt   string `json:"f"`
	RecoveredBy string `json:"rb"`
	LastHB      string `json:"lh"`
}

// RescueList lists recent rescues newest first from the rescues index.
func (s *Store) RescueList(ctx context.Context, p *store.RescueListParams) ([]store.Rescue, error) {
	since := "-inf"
	if !p.Since.IsZero() {
		since = unixMS(p.Since)
	}
	v, err := s.call(ctx, "rescues", since, insightsLimit(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list rescues: %w", err)
	}
	rows := asSlice(v)
	out := make([]store.Rescue, 0, len(rows))
	for _, row := range rows {
		r := asSlice(row)
		var e rescueEntry
		if err := json.Unmarshal([]byte(asString(r[0])), &e); err != nil {
			return nil, fmt.Errorf("rescue entry: %w", err)
		}
		rs := store.Rescue{
			JobID: e.JobID, Attempt: atoi(e.Attempt), Queue: asString(r[1]), Kind: asString(r[2]),
			State: store.State(asString(r[3])), WorkerID: e.WorkerID, StartedAt: msTime(e.StartedAt),
			RescuedAt: msTime(e.RescuedAt), RecoveredBy: e.RecoveredBy,
		}
		if e.LastHB != "" {
			rs.LastHeartbeatAt = msTime(e.LastHB)
		}
		out = append(out, rs)
	}
	return out, nil
}

// RescueCount counts the newest entries of the rescue index by node, in
// one script (rescuecount.lua), so only the counts cross the network.
func (s *Store) RescueCount(ctx context.Context, p *store.RescueCountParams) (map[string]int64, error) {
	since := "-inf"
	if !p.Since.IsZero() {
		since = unixMS(p.Since)
	}
	v, err := s.call(ctx, "rescuecount", since, store.MaxRescuesCounted)
	if err != nil {
		return nil, fmt.Errorf("count rescues: %w", err)
	}
	r := asSlice(v)
	out := make(map[string]int64, len(r)/2)
	for i := 0; i+1 < len(r); i += 2 {
		n, _ := r[i+1].(int64)
		out[asString(r[i])] += n
	}
	return out, nil
}

// ThroughputList reads the per-minute counters, one HMGET per minute, all
// pipelined in one round trip.
func (s *Store) ThroughputList(ctx context.Context, p *store.ThroughputListParams) ([]store.ThroughputMinute, error) {
	from := p.From.UTC().Truncate(time.Minute)
	to := p.To.UTC()
	if !from.Before(to) {
		return []store.ThroughputMinute{}, nil
	}
	n := int((to.Sub(from) + time.Minute - 1) / time.Minute)
	if n > store.MaxThroughputMinutes {
		from = from.Add(time.Duration(n-store.MaxThroughputMinutes) * time.Minute)
		n = store.MaxThroughputMinutes
	}
	out := make([]store.ThroughputMinute, n)
	cmds := make([]*goredis.SliceCmd, n)
	_, err := s.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
		for i := range out {
			m := from.Add(time.Duration(i) * time.Minute)
			out[i].Minute = m
			cmds[i] = pl.HMGet(ctx, s.prefix+"tp:"+unixMS(m), "s", "f", "r")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read throughput: %w", err)
	}
	for i, c := range cmds {
		v := c.Val()
		out[i].Succeeded = counter(v[0])
		out[i].Failed = counter(v[1])
		out[i].Rescued = counter(v[2])
	}
	return out, nil
}

func counter(v any) int64 {
	n, _ := strconv.ParseInt(asString(v), 10, 64)
	return n
}

// ThroughputRoll has nothing to roll up or drop: each settle adds to its
// minute's counter (lib_ack.lua, lib_end.lua), which expires by itself
// after ThroughputRetention and a little more.
func (s *Store) ThroughputRoll(context.Context, *store.ThroughputRollParams) (int, error) {
	return 0, nil
}
