package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
)

// crossWake bounds a wake-up from one replica to another: the issue's
// deadline; pub/sub takes well under a millisecond on one machine.
const crossWake = time.Second

func woken(ch <-chan struct{}, within time.Duration) (time.Duration, bool) {
	start := time.Now()
	select {
	case <-ch:
		return time.Since(start), true
	case <-time.After(within):
		return within, false
	}
}

// TestWakeupAcrossStores: a long-poll on one replica wakes when another
// enqueues, or rescues a job.
func TestWakeupAcrossStores(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	a := open(t, url, "")
	b := open(t, url, a.PrefixForTest())
	ctx := t.Context()
	now := storetest.Base

	ch := a.LeaseWakeup([]string{"default"}).C()
	// A replica of another prefix is another Tether: it wakes nobody here.
	other := open(t, url, "")
	if _, err := other.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k"}}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, ok := woken(ch, 200*time.Millisecond); ok {
		t.Fatal("an enqueue under another prefix woke this store's leasers")
	}
	if _, err := b.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k"}}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if d, ok := woken(ch, crossWake); !ok {
		t.Fatalf("an enqueue on another replica did not wake a leaser within %s", crossWake)
	} else {
		t.Logf("enqueue woke the other replica in %s", d)
	}

	jobs, err := a.JobLease(ctx, &store.JobLeaseParams{WorkerID: "host:1", Queues: []string{"default"}, Max: 1, Now: now})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("lease: %d, %v", len(jobs), err)
	}
	now = now.Add(time.Minute)
	o, err := b.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-store.DefaultDeadAfter)})
	if err != nil || len(o) != 1 {
		t.Fatalf("orphans: %d, %v", len(o), err)
	}
	ch = a.LeaseWakeup([]string{"default"}).C()
	if _, err := b.JobRecover(ctx, &store.JobRecoverParams{Orphans: o, NodeID: "n", Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, ok := woken(ch, crossWake); !ok {
		t.Fatalf("a rescue on another replica did not wake a leaser within %s", crossWake)
	}
}

// TestWakeupAfterRestart: redis-server restarts under two replicas. While
// it is down, waiting leasers are polled awake; once it is back, the
// subscription is renewed and cross-replica wake-ups work again.
func TestWakeupAfterRestart(t *testing.T) {
	srv := storetest.StartRedis(t)
	poll := 100 * time.Millisecond
	a := open(t, srv.URL(), "", redis.WithPollInterval(poll))
	b := open(t, srv.URL(), a.PrefixForTest())
	ctx := t.Context()

	srv.Kill9()
	ch := a.LeaseWakeup([]string{"default"}).C()
	if _, ok := woken(ch, 5*time.Second); !ok {
		t.Fatal("with redis-server down, waiting leasers were not polled awake")
	}
	srv.Start()
	waitFor(t, "the subscription to come back", 15*time.Second, a.SubscribedForTest)

	ch = a.LeaseWakeup([]string{"default"}).C()
	enqueue := func() error {
		_, err := b.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k"}}, Now: storetest.Base})
		return err
	}
	// b's pooled connections died with the server; each reports it once.
	waitFor(t, "an enqueue after the restart", 15*time.Second, func() bool { return enqueue() == nil })
	if _, ok := woken(ch, crossWake); !ok {
		t.Fatalf("after a restart, an enqueue on another replica did not wake a leaser within %s", crossWake)
	}
	// And it keeps working: a fresh wait, a fresh enqueue.
	ch = a.LeaseWakeup([]string{"default"}).C()
	if err := enqueue(); err != nil {
		t.Fatal(err)
	}
	if _, ok := woken(ch, crossWake); !ok {
		t.Fatalf("second wake-up after the restart missed")
	}
}

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOpenPassword: a password in the URL authenticates; a wrong one fails
// at Open.
func TestOpenPassword(t *testing.T) {
	srv := storetest.StartRedis(t, "--requirepass", "s3cret")
	url := func(pw string) string { return "redis://:" + pw + "@127.0.0.1:" + itoa(srv.Port) + "/0" }
	var s *redis.Store
	var err error
	waitFor(t, "redis-server with a password", 10*time.Second, func() bool {
		s, err = redis.Open(context.Background(), url("s3cret"))
		return err == nil
	})
	defer s.Close()
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if s, err := redis.Open(t.Context(), url("wrong")); err == nil {
		s.Close()
		t.Error("Open with a wrong password succeeded")
	}
}
