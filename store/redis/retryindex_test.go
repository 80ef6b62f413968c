package redis_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
)

// retried enqueues n jobs in queue q, leases them and fails each with a
// retry delay: retryIn(i) for the i-th. It returns them as failed,
// scheduled with attempt 1.
func retried(t *testing.T, s *redis.Store, q string, n int, now time.Time, retryIn func(i int) time.Duration) []*store.Job {
	t.Helper()
	ctx := t.Context()
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Queue: q}
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{q}, Max: n, Now: now})
	if err != nil || len(leased) != n {
		t.Fatalf("lease: %d jobs, %v", len(leased), err)
	}
	out := make([]*store.Job, n)
	for i, j := range leased {
		d := retryIn(i)
		out[i], err = s.JobFail(ctx, &store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "x", RetryIn: &d, Now: now})
		if err != nil || out[i].State != store.StateScheduled || out[i].Attempt != 1 {
			t.Fatalf("fail: %+v, %v", out[i], err)
		}
	}
	return out
}

// scheduleLater enqueues n jobs in queue q that run at now + in: scheduled,
// never tried.
func scheduleLater(t *testing.T, s *redis.Store, q string, n int, now time.Time, in time.Duration) {
	t.Helper()
	for done := 0; done < n; done += 1000 {
		specs := make([]store.JobSpec, min(1000, n-done))
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "k", Queue: q, RunAt: now.Add(in)}
		}
		if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
}

// retryPages follows JobListRetrying to its end and returns the pages' ids,
// failing on an empty page that offers a next one.
func retryPages(t *testing.T, s *redis.Store, q string, limit int) [][]string {
	t.Helper()
	var pages [][]string
	cursor := ""
	for {
		page, err := s.JobListRetrying(t.Context(), &store.JobListRetryingParams{Queue: q, Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) == 0 && page.NextCursor != "" {
			t.Fatalf("queue %q, limit %d: page %d is empty and offers a next page", q, limit, len(pages)+1)
		}
		var ids []string
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
		}
		pages = append(pages, ids)
		if page.NextCursor == "" {
			return pages
		}
		if len(pages) > 1000 {
			t.Fatal("the list did not end")
		}
		cursor = page.NextCursor
	}
}

func jobIDs(jobs []*store.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// TestRetriesBehindScheduled: thousands of jobs scheduled for later, due
// before the few retrying ones, do not hide them: the first page holds the
// retries, and it is the only page. (Read from the scheduled sets, the
// first pages were empty, each offering a next page.)
func TestRetriesBehindScheduled(t *testing.T) {
	t.Parallel()
	s := open(t, testURL(t), "")
	now := storetest.Base
	a := retried(t, s, "a", 2, now, func(i int) time.Duration { return time.Duration(3-2*i) * time.Hour }) // 3 h, 1 h
	b := retried(t, s, "b", 1, now, func(int) time.Duration { return 2 * time.Hour })
	scheduleLater(t, s, "a", 3*redis.InsightsBatch, now, time.Minute)
	scheduleLater(t, s, "b", 2*redis.InsightsBatch, now, time.Minute)

	all := []string{a[1].ID, b[0].ID, a[0].ID}
	for _, tt := range []struct {
		queue string
		limit int
		want  [][]string
	}{
		{"", 0, [][]string{all}},
		{"", 2, [][]string{all[:2], all[2:]}},
		{"a", 0, [][]string{{a[1].ID, a[0].ID}}},
		{"b", 1, [][]string{{b[0].ID}}},
		{"nope", 0, [][]string{nil}},
	} {
		got := retryPages(t, s, tt.queue, tt.limit)
		if !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("retrying in %q, limit %d: pages %q, want %q", tt.queue, tt.limit, got, tt.want)
		}
	}
}

// indexed checks queue q's retry set against want (ids, soonest first),
// each scored by its run_at, and the list and the count read from it.
func indexed(t *testing.T, s *redis.Store, q string, step string, want ...*store.Job) {
	t.Helper()
	ctx := t.Context()
	zs, err := raw(t, testURL(t)).ZRangeWithScores(ctx, s.PrefixForTest()+"{"+q+"}:retry", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var got, wantEntries []string
	for _, z := range zs {
		got = append(got, fmt.Sprintf("%s@%.0f", z.Member, z.Score))
	}
	for _, j := range want {
		wantEntries = append(wantEntries, fmt.Sprintf("%s@%d", j.ID, j.RunAt.UnixMilli()))
	}
	if !slices.Equal(got, wantEntries) {
		t.Errorf("%s: retry set = %s, want %s", step, short(got), short(wantEntries))
	}
	if listed := slices.Concat(retryPages(t, s, q, 0)...); !slices.Equal(listed, jobIDs(want)) {
		t.Errorf("%s: JobListRetrying = %s, want %s", step, short(listed), short(jobIDs(want)))
	}
	qs, err := s.QueueList(ctx, &store.QueueListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, queue := range qs {
		if queue.Name == q && queue.Retrying != int64(len(want)) {
			t.Errorf("%s: queue %s retrying = %d, want %d", step, q, queue.Retrying, len(want))
		}
	}
}

// TestRetryIndexTransitions: the retry set follows every transition into
// and out of retrying: fail, reap and release with a delay put a job in
// (release only while an attempt is left behind it), promote, run, cancel
// and delete take it out, and a retried (dead or cancelled) job starts
// again at attempt 0, outside it.
func TestRetryIndexTransitions(t *testing.T) {
	t.Parallel()
	s := open(t, testURL(t), "")
	ctx := t.Context()
	now := storetest.Base
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	lease := func(n int) []*store.Job {
		t.Helper()
		jobs, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"q"}, Max: n, Now: now})
		if err != nil || len(jobs) != n {
			t.Fatalf("lease: %d jobs, %v", len(jobs), err)
		}
		return jobs
	}
	f := retried(t, s, "q", 4, now, func(i int) time.Duration { return time.Duration(i+1) * time.Minute })
	indexed(t, s, "q", "fail", f...)

	// Released after a second attempt: attempt 1 is behind it, retrying;
	// released after its first: attempt 0, merely scheduled.
	zero := time.Duration(0)
	specs := []store.JobSpec{{Kind: "k", Queue: "q"}, {Kind: "k", Queue: "q"}}
	must(s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}))
	two := lease(2)
	must(s.JobFail(ctx, &store.JobFailParams{ID: two[0].ID, Token: two[0].Lease.Token, Error: "x", RetryIn: &zero, Now: now}))
	again := lease(1)[0]
	rel, err := s.JobRelease(ctx, &store.JobReleaseParams{ID: again.ID, Token: again.Lease.Token, Delay: 5 * time.Minute, Now: now})
	if err != nil || rel.Attempt != 1 {
		t.Fatalf("release: %+v, %v", rel, err)
	}
	must(s.JobRelease(ctx, &store.JobReleaseParams{ID: two[1].ID, Token: two[1].Lease.Token, Delay: time.Hour, Now: now}))
	indexed(t, s, "q", "release", append(f, rel)...)

	// Reaped: timed out, backoff.
	must(s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k", Queue: "q", Timeout: time.Second,
		Backoff: store.Backoff{Base: 10 * time.Minute, Max: 10 * time.Minute}}}, Now: now}))
	lease(1)
	reaped, err := s.JobReap(ctx, &store.JobReapParams{Now: now.Add(2 * time.Second)})
	if err != nil || len(reaped) != 1 || reaped[0].State != store.StateScheduled {
		t.Fatalf("reap: %+v, %v", reaped, err)
	}
	indexed(t, s, "q", "reap", f[0], f[1], f[2], f[3], rel, reaped[0])

	// f[0] is due at now + 1 min: promoted, it is available, attempt 1.
	now = now.Add(90 * time.Second)
	if n, err := s.JobPromote(ctx, &store.JobPromoteParams{Now: now}); err != nil || n != 1 {
		t.Fatalf("promote: %d, %v", n, err)
	}
	indexed(t, s, "q", "promote", f[1], f[2], f[3], rel, reaped[0])
	must(s.JobRun(ctx, &store.JobRunParams{ID: f[1].ID, Now: now}))
	indexed(t, s, "q", "run", f[2], f[3], rel, reaped[0])
	must(s.JobCancel(ctx, &store.JobCancelParams{ID: f[2].ID, Now: now}))
	indexed(t, s, "q", "cancel", f[3], rel, reaped[0])
	must(nil, s.JobDelete(ctx, &store.JobDeleteParams{ID: f[3].ID}))
	indexed(t, s, "q", "delete", rel, reaped[0])
	retry, err := s.JobRetry(ctx, &store.JobRetryParams{ID: f[2].ID, Now: now})
	if err != nil || retry.State != store.StateAvailable || retry.Attempt != 0 {
		t.Fatalf("retry of the cancelled job: %+v, %v", retry, err)
	}
	indexed(t, s, "q", "retry of a cancelled job", rel, reaped[0])
}

// TestRetryIndexUpgrade: a store the previous version wrote has retrying
// jobs but no retry sets (and a "retrying" counter). Open builds the sets,
// over more entries than one step checks, and drops the counter; an entry
// that is no longer a retrying job goes.
func TestRetryIndexUpgrade(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	s := open(t, url, "")
	ctx := t.Context()
	now := storetest.Base
	n := redis.InsightsBatch // exactly one full batch: the list ends with it
	jobs := retried(t, s, "q", n, now, func(i int) time.Duration { return time.Duration(n-i) * time.Second })
	slices.Reverse(jobs)
	scheduleLater(t, s, "q", 2*redis.ReindexBatch, now, time.Second/2)
	other, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k", Queue: "q"}}, Now: now})
	if err != nil {
		t.Fatal(err)
	}

	p, c := s.PrefixForTest(), raw(t, url)
	for _, cmd := range [][]any{
		{"DEL", p + "{q}:retry"},
		{"ZADD", p + "{q}:retry", unixMS(now), other.Jobs[0].ID}, // available: not retrying
		{"SREM", p + "migrations", "retry-index"},
		{"HSET", p + "{q}:m", "retrying", n},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s = open(t, url, p)
	indexed(t, s, "q", "upgrade", jobs...)
	if has, _ := c.HExists(ctx, p+"{q}:m", "retrying").Result(); has {
		t.Error("the retrying counter is still there")
	}
	if done, _ := c.SIsMember(ctx, p+"migrations", "retry-index").Result(); !done {
		t.Error("the build is not recorded in migrations")
	}
	for _, limit := range []int{0, n} {
		pages := retryPages(t, s, "", limit)
		if want := (n + limitOr(limit) - 1) / limitOr(limit); len(pages) != want {
			t.Errorf("limit %d: %d pages, want %d", limit, len(pages), want)
		}
		if got := slices.Concat(pages...); !slices.Equal(got, jobIDs(jobs)) {
			t.Errorf("limit %d: listed %d jobs, want all %d soonest first", limit, len(got), n)
		}
		for i, page := range pages {
			if want := min(limitOr(limit), n-i*limitOr(limit)); len(page) != want {
				t.Errorf("limit %d: page %d holds %d jobs, want %d", limit, i+1, len(page), want)
			}
		}
	}
}

// short prints a list of ids, or its length and ends when it is long.
func short(ids []string) string {
	if len(ids) <= 6 {
		return fmt.Sprintf("%q", ids)
	}
	return fmt.Sprintf("%d ids %q … %q", len(ids), ids[:3], ids[len(ids)-3:])
}

func limitOr(limit int) int {
	if limit == 0 {
		return store.DefaultInsightsLimit
	}
	return limit
}

func unixMS(t time.Time) string { return fmt.Sprint(t.UnixMilli()) }
