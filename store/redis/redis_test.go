package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
)

// testURL is the redis-server the tests share (scripts/redis.sh starts
// one). Without it the tests skip, except on CI, where a missing Redis
// fails the run.
func testURL(t testing.TB) string {
	t.Helper()
	return storetest.EnvURL(t, "TETHER_TEST_REDIS_URL", "scripts/redis.sh")
}

// newPrefix is a key prefix of its own, so tests share one redis-server
// without seeing each other's keys.
func newPrefix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "tether-test:" + hex.EncodeToString(b) + ":"
}

// open opens a store on url under prefix (a fresh one when empty) and
// closes it, and deletes the prefix's keys, when the test ends.
func open(t testing.TB, url, prefix string, opts ...redis.Option) *redis.Store {
	t.Helper()
	if prefix == "" {
		prefix = newPrefix()
		t.Cleanup(func() { dropPrefix(t, url, prefix) })
	}
	s, err := redis.Open(context.Background(), url, append([]redis.Option{redis.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// raw is a plain client of url, for looking at keys.
func raw(t testing.TB, url string) *goredis.Client {
	t.Helper()
	o, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// dropPrefix deletes every key under prefix (which holds no glob
// characters).
func dropPrefix(t testing.TB, url, prefix string) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return
	}
	c := goredis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			c.Unlink(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		c.Unlink(ctx, batch...)
	}
}

func TestContract(t *testing.T) {
	url := testURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, url, "") })
}

func TestOpenURL(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	prefix := newPrefix()
	t.Cleanup(func() { dropPrefix(t, url, prefix) })
	// The prefix may come with the URL, for --store.
	s, err := redis.Open(t.Context(), url+"?prefix="+prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.PrefixForTest(); got != prefix {
		t.Errorf("prefix = %q, want %q", got, prefix)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	now, err := s.Now(t.Context())
	if err != nil || time.Since(now).Abs() > time.Minute {
		t.Errorf("Now = %s, %v; want redis-server's clock, close to ours", now, err)
	}
	for _, bad := range []string{"postgres://x", "redis://127.0.0.1:1/0"} {
		if s, err := redis.Open(t.Context(), bad); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

// TestScriptCacheFlushed: a server that lost its script cache (a restart,
// SCRIPT FLUSH) answers NOSCRIPT; single calls and pipelined batches load
// the script again and go on.
func TestScriptCacheFlushed(t *testing.T) {
	url := testURL(t)
	s := open(t, url, "")
	ctx := t.Context()
	now := storetest.Base
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k"}, {Kind: "k"}}, Now: now}); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"default"}, Max: 2, Now: now})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("lease: %d jobs, %v", len(jobs), err)
	}
	if err := raw(t, url).ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	orphans, err := s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-store.DefaultDeadAfter)})
	if err != nil || len(orphans) != 2 {
		t.Fatalf("orphans after SCRIPT FLUSH: %d, %v", len(orphans), err)
	}
	raw(t, url).ScriptFlush(ctx)
	won, err := s.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "n", Now: now})
	if err != nil || len(won) != 2 {
		t.Fatalf("pipelined recover after SCRIPT FLUSH: %d, %v", len(won), err)
	}
}
