package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/sqlite"
)

// BenchmarkPages1M renders every page over a store holding a million jobs,
// as a server at the end of a busy hour would: most succeeded, some dead,
// retrying, scheduled, waiting and running, with an hour of throughput and
// rescues, three server nodes (one stopped), a week of each queue's depth
// sampled every minute, and the hour's finished jobs rolled up per minute
// as the scheduler does. It runs one sub-benchmark per backend (sqlite, postgres, redis);
// each fills its store through store.Store's batch calls, which takes
// minutes, so it all runs only with TETHER_BENCH_BIG=1 (never in make test
// or make bench):
//
//	eval "$(scripts/postgres.sh)"; eval "$(scripts/redis.sh)"
//	TETHER_BENCH_BIG=1 go test -run '^$' -bench Pages1M -benchtime 20x -timeout 90m ./web
//	scripts/redis.sh stop
//
// -bench Pages1M/postgres picks one backend. Postgres runs in the schema
// pages1m of TETHER_TEST_POSTGRES_URL's database and Redis under the key
// prefix pages1m: on TETHER_TEST_REDIS_URL's server; each is skipped
// without its variable. A store that already holds the jobs is reused, so
// only the first run fills: the Postgres schema and the Redis keys stay
// until dropped, and SQLite's file stays when TETHER_BENCH_DIR names a
// directory to keep it in. TETHER_BENCH_JOBS changes the million (and the
// names: pages<N>). Redis also reports its used_memory after the fill and
// what the insights keys (throughput counters, rescue index) take of it.
//
// The time per op is the server time of one page (or of one poll of the
// event stream's aggregates).
func BenchmarkPages1M(b *testing.B) {
	if os.Getenv("TETHER_BENCH_BIG") != "1" {
		b.Skip("set TETHER_BENCH_BIG=1 to fill a million jobs and time every page")
	}
	total := 1_000_000
	if v := os.Getenv("TETHER_BENCH_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10_000 {
			b.Fatalf("TETHER_BENCH_JOBS=%q: want a number of jobs, at least 10000", v)
		}
		total = n
	}
	name := "pages1m"
	if total != 1_000_000 {
		name = "pages" + strconv.Itoa(total)
	}
	for _, bk := range []backend{
		{"sqlite", openSQLite, nil},
		{"postgres", openPostgres, nil},
		{"redis", openRedis, reportRedisMemory},
	} {
		b.Run(bk.name, func(b *testing.B) { benchPages(b, bk, name, total) })
	}
}

// benchStore is what the pages read: a store with its insights.
type benchStore interface {
	store.Store
	store.Insights
}

type backend struct {
	name string
	// open opens the store of the named data set (skipping the benchmark
	// when the backend's server is not configured) and says how to drop
	// it.
	open func(b *testing.B, name string) (st benchStore, drop string)
	// report, if set, logs what the filled store costs.
	report func(b *testing.B, st benchStore, name string, jobs int64)
}

func benchPages(b *testing.B, bk backend, name string, total int) {
	st, drop := bk.open(b, name)
	defer st.Close()
	f := &filler{b: b, st: st}
	switch n := f.count(); {
	case n == 0:
		f.fill(total, time.Now().UTC().Add(-time.Hour))
	case n < int64(total):
		b.Fatalf("%s holds %d of %d jobs, from a fill that did not finish: %s and run again", bk.name, n, total, drop)
	}
	if bk.report != nil {
		bk.report(b, st, name, f.count())
	}
	ids := f.samples()
	// The pages look at the store a few seconds after the fill's last
	// minute, while its live workers are still live.
	now := ids.newest.Add(10 * time.Second)
	clock := func() time.Time { return now }
	// Three replicas share the store: two live, one stopped (a cheap write,
	// repeated on every run).
	for i, id := range []string{"node-1", "node-2", "node-3"} {
		if err := st.NodeHeartbeat(b.Context(), &store.NodeHeartbeatParams{ID: id, Version: "v1", StartedAt: now.Add(-time.Hour), Now: now}); err != nil {
			b.Fatal(err)
		}
		if i == 2 {
			if err := st.NodeStop(b.Context(), &store.NodeStopParams{ID: id, Now: now}); err != nil {
				b.Fatal(err)
			}
		}
	}
	f.depthWeek(now)
	f.rollHour(now)
	h, err := New(Config{Store: st, Insights: st, Now: clock, NodeID: "node-1"})
	if err != nil {
		b.Fatal(err)
	}
	d := &dash{cfg: Config{HeartbeatInterval: store.DefaultHeartbeatInterval, DeadAfter: store.DefaultDeadAfter},
		store: st, ins: st, now: clock}
	// The first overview after opening runs on cold caches (and, on
	// Postgres, counts live the throughput minutes no tick summed yet).
	began := time.Now()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Fprintf(os.Stderr, "%s: first GET / after opening: %s\n", bk.name, time.Since(began).Round(time.Millisecond))
	b.Run("events-poll", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.snapshot(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The scheduler's roll-up of one busy minute of the fill (≈ 16,000
	// jobs finished), written again as a replica would: what the tick
	// spends on it once a minute.
	b.Run("minute-roll", func(b *testing.B) {
		minute := now.Add(-30 * time.Minute)
		for b.Loop() {
			if _, err := st.QueueMinuteRoll(context.Background(), &store.QueueMinuteRollParams{Minute: minute, Now: now}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, p := range []struct{ name, path string }{
		{"overview", "/"},
		{"queues", "/queues"},
		{"queue", "/queues/emails"},
		{"queue-24h", "/queues/emails?range=24h"},
		{"queue-7d", "/queues/emails?range=7d"},
		{"workers", "/workers"},
		{"nodes", "/nodes"},
		{"orphans", "/orphans"},
		{"retries", "/retries"},
		{"retries-queue", "/retries?queue=images"},
		{"dead", "/dead"},
		{"dead-queue", "/dead?queue=emails"},
		{"dead-rare-kind", "/dead?kind=nope"},
		{"jobs", "/jobs"},
		{"jobs-queue-state", "/jobs?queue=emails&state=dead"},
		{"jobs-state-available", "/jobs?state=available"},
		{"jobs-rare-kind", "/jobs?kind=nope"},
		{"jobs-id-prefix", "/jobs?q=" + ids.dead[:13]},
		{"job", "/jobs/" + ids.dead},
		{"fragment-throughput", "/?fragment=throughput"},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p.path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", p.path, rec.Code)
				}
			}
		})
	}
}

// openSQLite opens name.db in TETHER_BENCH_DIR, or in a directory the
// benchmark removes when it ends.
func openSQLite(b *testing.B, name string) (benchStore, string) {
	dir := os.Getenv("TETHER_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, name+".db")
	st, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	return st, "remove " + path
}

// openPostgres opens a store in the schema name, creating it if needed.
func openPostgres(b *testing.B, name string) (benchStore, string) {
	raw := os.Getenv("TETHER_TEST_POSTGRES_URL")
	if raw == "" {
		b.Skip(`TETHER_TEST_POSTGRES_URL is not set; eval "$(scripts/postgres.sh)" to measure Postgres`)
	}
	conn, err := pgx.Connect(b.Context(), raw)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(b.Context(), "CREATE SCHEMA IF NOT EXISTS "+name); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	st, err := postgres.Open(b.Context(), u.String())
	if err != nil {
		b.Fatal(err)
	}
	return st, "DROP SCHEMA " + name + " CASCADE"
}

// openRedis opens a store under the key prefix name.
func openRedis(b *testing.B, name string) (benchStore, string) {
	raw := os.Getenv("TETHER_TEST_REDIS_URL")
	if raw == "" {
		b.Skip(`TETHER_TEST_REDIS_URL is not set; eval "$(scripts/redis.sh)" to measure Redis`)
	}
	st, err := redis.Open(b.Context(), raw, redis.WithPrefix(name+":"))
	if err != nil {
		b.Fatal(err)
	}
	return st, "delete the keys " + name + ":* (or start a fresh redis-server)"
}

// reportRedisMemory logs the server's used_memory per job (the server is
// assumed to hold this data set alone) and the memory of the keys only the
// insights keep: the per-minute throughput counters and the rescue index.
func reportRedisMemory(b *testing.B, _ benchStore, name string, jobs int64) {
	o, err := goredis.ParseURL(os.Getenv("TETHER_TEST_REDIS_URL"))
	if err != nil {
		b.Fatal(err)
	}
	c := goredis.NewClient(o)
	defer c.Close()
	ctx := b.Context()
	info, err := c.InfoMap(ctx, "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	used, _ := strconv.ParseInt(info["Memory"]["used_memory"], 10, 64)
	var tp int64
	var minutes int
	iter := c.Scan(ctx, 0, name+":tp:*", 10_000).Iterator()
	for iter.Next(ctx) {
		n, err := c.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil {
			b.Fatal(err)
		}
		tp += n
		minutes++
	}
	if err := iter.Err(); err != nil {
		b.Fatal(err)
	}
	rescues, err := c.MemoryUsage(ctx, name+":rescues", 0).Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		b.Fatal(err)
	}
	n, _ := c.ZCard(ctx, name+":rescues").Result()
	fmt.Fprintf(os.Stderr, "redis: used_memory %d bytes for %d jobs (%d bytes per job); "+
		"throughput counters %d bytes in %d keys; rescue index %d bytes for %d rescues\n",
		used, jobs, used/max(jobs, 1), tp, minutes, rescues, n)
}

// filler writes the jobs through the store's own batch calls, an hour of
// history moving forward as it goes, as a busy server would.
type filler struct {
	b     *testing.B
	st    benchStore
	start time.Time
	total int
}

type sampleIDs struct {
	dead   string
	newest time.Time // when the newest job was created
}

var fillQueues = []string{"emails", "images", "reports", "webhooks"}

func (f *filler) at(done int) time.Time {
	return f.start.Add(time.Duration(float64(time.Hour) * float64(done) / float64(f.total)))
}

// count is how many jobs the store holds.
func (f *filler) count() int64 {
	st, err := f.st.StatsGet(f.b.Context(), &store.StatsGetParams{Now: time.Now()})
	if err != nil {
		f.b.Fatal(err)
	}
	var n int64
	for _, c := range st.Jobs {
		n += c
	}
	return n
}

func (f *filler) fill(total int, start time.Time) {
	f.start, f.total = start, total
	began := time.Now()
	const batch = 1000
	for done := 0; done < total; done += batch {
		f.batch(done, batch)
		if done%100_000 == 0 {
			fmt.Fprintf(os.Stderr, "filled %d jobs in %s\n", done, time.Since(began).Round(time.Second))
		}
	}
	// Live workers at work, as the hour ends.
	for i := range 20 {
		w := fmt.Sprintf("worker-%02d", i)
		if _, err := f.st.JobLease(f.b.Context(), &store.JobLeaseParams{WorkerID: w, Queues: fillQueues, Max: 25, Now: f.at(total)}); err != nil {
			f.b.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "filled %d jobs in %s\n", total, time.Since(began).Round(time.Second))
}

// batch enqueues n jobs of one queue and settles most of them: 1 in 50
// dies, 1 in 100 retries, 1 in 1000 is rescued from a dead worker; every
// tenth batch stays available. Then it promotes, as the scheduler does
// every tick (on Postgres that also folds the count deltas).
func (f *filler) batch(done, n int) {
	ctx := f.b.Context()
	at := f.at(done)
	q := fillQueues[(done/n)%len(fillQueues)]
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: q + "_job", Queue: q, Payload: []byte(`{"n":1}`)}
		if i%100 == 0 {
			specs[i].RunAt = at.Add(2 * time.Hour) // scheduled for later
		}
	}
	if _, err := f.st.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: at}); err != nil {
		f.b.Fatal(err)
	}
	if done/n%10 != 9 {
		f.settle(q, n, at)
	}
	if _, err := f.st.JobPromote(ctx, &store.JobPromoteParams{Limit: n, Now: at}); err != nil {
		f.b.Fatal(err)
	}
	if _, err := f.st.CountFold(ctx, &store.CountFoldParams{}); err != nil {
		f.b.Fatal(err)
	}
	if _, err := f.st.ThroughputRoll(ctx, &store.ThroughputRollParams{Now: at}); err != nil {
		f.b.Fatal(err)
	}
}

func (f *filler) settle(q string, n int, at time.Time) {
	ctx := f.b.Context()
	leased, err := f.st.JobLease(ctx, &store.JobLeaseParams{WorkerID: "filler-" + q, Queues: []string{q}, Max: n, Now: at})
	if err != nil {
		f.b.Fatal(err)
	}
	p := &store.JobSettleParams{Now: at.Add(time.Second)}
	var orphans []store.Orphan
	for i, j := range leased {
		switch {
		case i%1000 == 7:
			orphans = append(orphans, store.Orphan{JobID: j.ID, WorkerID: j.Lease.WorkerID, Token: j.Lease.Token, LastHeartbeatAt: at})
		case i%50 == 3:
			p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "bad input", NoRetry: true})
		case i%100 == 5:
			later := 3 * time.Hour
			p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "try later", RetryIn: &later})
		default:
			p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
		}
	}
	if _, err := f.st.JobSettle(ctx, p); err != nil {
		f.b.Fatal(err)
	}
	if _, err := f.st.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "node-1", Now: at.Add(15 * time.Second)}); err != nil {
		f.b.Fatal(err)
	}
}

// samples picks a dead job for the pages that name one, and reads when the
// newest job was created: the end of the filled hour, which may have been
// filled by an earlier run.
func (f *filler) samples() sampleIDs {
	ctx := f.b.Context()
	dead, err := f.st.JobListDead(ctx, &store.JobListDeadParams{Limit: 1})
	if err != nil || len(dead.Jobs) == 0 {
		f.b.Fatalf("no dead job to sample: %v", err)
	}
	newest, err := f.st.JobSearch(ctx, &store.JobSearchParams{Limit: 1})
	if err != nil || len(newest.Jobs) == 0 {
		f.b.Fatalf("no job to sample: %v", err)
	}
	return sampleIDs{dead: dead.Jobs[0].ID, newest: newest.Jobs[0].CreatedAt}
}

// depthWeek gives every queue a week of depth samples up to now, one a
// minute as the scheduler keeps them, unless the store has them already.
func (f *filler) depthWeek(now time.Time) {
	ctx := f.b.Context()
	have, err := f.st.QueueDepthList(ctx, &store.QueueDepthListParams{Queue: fillQueues[0], Since: now.Add(-store.DepthRetention), Until: now})
	if err != nil {
		f.b.Fatal(err)
	}
	if len(have) >= store.MaxDepthMinutes-10 {
		return
	}
	began := time.Now()
	depths := make([]store.QueueDepth, len(fillQueues))
	for m := store.MaxDepthMinutes; m >= 1; m-- {
		for i, q := range fillQueues {
			depths[i] = store.QueueDepth{Queue: q, Available: int64(1000 + (m*7+i*13)%500), Scheduled: int64((m * 3) % 200)}
		}
		if _, err := f.st.QueueDepthRoll(ctx, &store.QueueDepthRollParams{Depths: depths, Now: now.Add(-time.Duration(m) * time.Minute)}); err != nil {
			f.b.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "sampled a week of depth for %d queues in %s\n", len(fillQueues), time.Since(began).Round(time.Second))
}

// rollHour rolls up every minute of the fill's hour, as the scheduler's
// tick does, unless the store has them already.
func (f *filler) rollHour(now time.Time) {
	ctx := f.b.Context()
	have, err := f.st.QueueMinuteList(ctx, &store.QueueMinuteListParams{Queue: fillQueues[0], Since: now.Add(-2 * time.Hour), Until: now})
	if err != nil {
		f.b.Fatal(err)
	}
	if len(have) > 0 {
		return
	}
	began := time.Now()
	for m := now.Add(-70 * time.Minute).Truncate(time.Minute); m.Before(now); m = m.Add(time.Minute) {
		if _, err := f.st.QueueMinuteRoll(ctx, &store.QueueMinuteRollParams{Minute: m, Now: now}); err != nil {
			f.b.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "rolled up the hour's finished jobs in %s\n", time.Since(began).Round(time.Millisecond))
}
