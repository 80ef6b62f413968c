package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
	"github.com/tetherq/tether/store/storetest"
)

// Three replicas on one shared store: a worker leases through A and goes
// silent, a live worker on B keeps its jobs, every silent job is rescued
// exactly once and leased again through C, and a long-poll on B wakes on an
// enqueue through A. Run against each shared backend.
func TestReplicasShareOneStore(t *testing.T) {
	eachSharedStore(t, testReplicas)
}

func testReplicas(t *testing.T, storeURL string) {
	ctx := t.Context()
	var replicas [3]*proc
	for i, name := range []string{"node-a", "node-b", "node-c"} {
		args := append([]string{"--addr", "127.0.0.1:0", "--store", storeURL, "--node-id", name}, fastArgs...)
		replicas[i] = startProcess(t, "", args...)
	}
	a, b, c := newClient(replicas[0].url), newClient(replicas[1].url), newClient(replicas[2].url)

	ids := enqueue(t, a, "shared", 50)
	kept := enqueue(t, a, "kept", 5)
	live, err := b.Lease(ctx, client.LeaseRequest{WorkerID: "10.0.0.6:8080:w-live", Queues: []string{"kept"}, Max: 5})
	if err != nil || len(live) != 5 {
		t.Fatalf("live worker lease = %d jobs, %v", len(live), err)
	}
	stop := keepAlive(t, b, "10.0.0.6:8080:w-live")
	defer stop()

	leasedAt := time.Now()
	held, err := a.Lease(ctx, client.LeaseRequest{WorkerID: "10.0.0.5:8080:w-3", Queues: []string{"shared"}, Max: 50})
	if err != nil || len(held) != 50 {
		t.Fatalf("silent worker lease = %d jobs, %v; want 50", len(held), err)
	}
	got := leaseAll(ctx, t, c, "w-rescuer", "shared", 50, leasedAt.Add(20*time.Second))
	elapsed := time.Since(leasedAt)
	if len(got) != 50 {
		t.Fatalf("got %d of 50 rescued jobs through replica C", len(got))
	}
	// dead_after (2 s) + two ticks (0.4 s), with slack for a loaded machine.
	if elapsed > 8*time.Second {
		t.Errorf("rescued jobs came back after %v, want within dead-after + 2 ticks (+ slack)", elapsed)
	}
	seen := map[string]bool{}
	for _, j := range got {
		if seen[j.ID] || !slices.Contains(ids, j.ID) {
			t.Errorf("job %s delivered twice or not one of the silent worker's", j.ID)
		}
		seen[j.ID] = true
		if j.Attempt != 2 || j.Rescues != 1 {
			t.Errorf("job %s: attempt %d rescues %d, want 2 and 1", j.ID, j.Attempt, j.Rescues)
		}
		full, err := c.GetJob(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		orphaned := 0
		for _, at := range full.Attempts {
			if at.Outcome == "orphaned" {
				orphaned++
				if at.WorkerID != "10.0.0.5:8080:w-3" || at.RecoveredBy == nil {
					t.Errorf("job %s orphaned attempt %+v", j.ID, at)
				}
			}
		}
		if orphaned != 1 {
			t.Errorf("job %s has %d orphaned attempts, want exactly 1", j.ID, orphaned)
		}
	}
	for _, j := range held[:5] {
		if _, err := a.Ack(ctx, j.ID, j.Lease.Token, nil); !errors.Is(err, client.ErrLeaseLost) {
			t.Errorf("stale ack through A: %v, want 409 lease_lost", err)
		}
	}
	for _, id := range kept {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != "running" || j.Rescues != 0 {
			t.Errorf("live worker's job %s: state %s rescues %d, want still running", id, j.State, j.Rescues)
		}
	}

	// A long-poll on B wakes within 1 s of an enqueue on A.
	woke := make(chan time.Time, 1)
	go func() {
		jobs, err := b.Lease(ctx, client.LeaseRequest{WorkerID: "w-waiter", Queues: []string{"wake"}, WaitMS: 10000})
		if err == nil && len(jobs) == 1 {
			woke <- time.Now()
		}
		close(woke)
	}()
	// Nothing the server says marks a lease as waiting, so give it a moment
	// to get there; were it late, it would find the job at once and still
	// pass, so the pause can only make the check stricter.
	time.Sleep(300 * time.Millisecond)
	enqueuedAt := time.Now()
	enqueue(t, a, "wake", 1)
	at, ok := <-woke
	if !ok {
		t.Fatal("the long-poll on B returned no job")
	}
	if d := at.Sub(enqueuedAt); d > time.Second {
		t.Errorf("long-poll on B woke %v after the enqueue on A, want under 1s", d)
	}

	// A worker deregistered through A: its long-poll waiting on B answers
	// with no job at once, not when its 30 s wait runs out.
	if _, err := a.RegisterWorker(ctx, client.WorkerRegistration{ID: "w-leaving", Queues: []string{"idle"}}); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		jobs, err := b.Lease(ctx, client.LeaseRequest{WorkerID: "w-leaving", Queues: []string{"idle"}, WaitMS: 30000})
		if err == nil && len(jobs) != 0 {
			err = fmt.Errorf("leased %d jobs", len(jobs))
		}
		ended <- err
	}()
	waitPolls(t, replicas[1].url, 1, time.Now().Add(10*time.Second))
	deregisteredAt := time.Now()
	if err := a.DeregisterWorker(ctx, "w-leaving"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the deregistered worker's long-poll on B: %v, want no job", err)
		}
		if d := time.Since(deregisteredAt); d > 10*time.Second {
			t.Errorf("the long-poll on B ended %v after the worker was deregistered on A", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the deregistered worker's long-poll on B kept waiting")
	}
}

// waitPolls waits until the server at url reports want long-polls
// waiting (tether_long_polls_waiting), or fails the test at deadline.
func waitPolls(t *testing.T, url string, want int, deadline time.Time) {
	t.Helper()
	line := fmt.Sprintf("tether_long_polls_waiting %d\n", want)
	for {
		res, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(body), line) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reported %q", url, strings.TrimSpace(line))
		}
		time.Sleep(20 * time.Millisecond) // the gauge is the only sign of a waiting poll
	}
}

// keepAlive heartbeats as worker every 300 ms until the returned stop.
func keepAlive(t *testing.T, c *client.Client, worker string) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				c.Heartbeat(ctx, worker, nil)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// eachSharedStore runs test in parallel subtests on each store replicas
// can share, with a store URL of its own.
func eachSharedStore(t *testing.T, test func(t *testing.T, storeURL string)) {
	for _, backend := range []struct {
		name  string
		store func(t *testing.T) string
	}{
		{"postgres", postgresStore},
		{"redis", redisStore},
	} {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			test(t, backend.store(t))
		})
	}
}

// postgresStore returns a store URL on a fresh schema of the test database,
// dropped when the test ends.
func postgresStore(t *testing.T) string { return storetest.PostgresSchema(t, "tether_replicas") }

// redisStore returns a store URL on the test redis-server under a fresh
// key prefix.
func redisStore(t *testing.T) string {
	raw := storetest.EnvURL(t, "TETHER_TEST_REDIS_URL", "scripts/redis.sh")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("prefix", "replicas-"+randomHex(6)+":")
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
