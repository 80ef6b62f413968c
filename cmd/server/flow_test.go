package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// Flow control across two replicas on one shared store, as a user checks
// it: with concurrency 3 and workers on both, running never exceeds 3 in
// any sample and no four deliveries overlap in time; with a rate of 5 a
// second no second holds more than 5 starts; with key_concurrency 1 no
// two jobs of a key run at once while other keys run beside them, and
// throttled jobs keep attempt 0; an ack on one replica
// frees the slot for a long-poll waiting on the other within a second; a
// silent worker's slot comes back within dead-after + 2 ticks.
func TestFlowAcrossReplicas(t *testing.T) {
	eachSharedStore(t, testFlowReplicas)
}

func testFlowReplicas(t *testing.T, storeURL string) {
	ctx := t.Context()
	var urls [2]string
	for i, name := range []string{"node-a", "node-b"} {
		args := append([]string{"--addr", "127.0.0.1:0", "--store", storeURL, "--node-id", name}, fastArgs...)
		urls[i] = startProcess(t, "", args...).url
	}
	a, b := newClient(urls[0]), newClient(urls[1])
	capN := 3
	if err := a.SetQueueLimits(ctx, "capped", client.QueueLimits{Concurrency: &capN}); err != nil {
		t.Fatal(err)
	}
	enqueue(t, a, "capped", 40)
	testCapHolds(t, []*client.Client{a, b}, urls[0], capN, 40)
	testRateHolds(t, []*client.Client{a, b})
	testKeysHold(t, []*client.Client{a, b})

	one := 1
	if err := b.SetQueueLimits(ctx, "one", client.QueueLimits{Concurrency: &one}); err != nil {
		t.Fatal(err)
	}
	enqueue(t, a, "one", 3)
	held, err := a.Lease(ctx, client.LeaseRequest{WorkerID: "w-ack", Queues: []string{"one"}, Max: 3})
	if err != nil || len(held) != 1 {
		t.Fatalf("lease under a cap of 1: %d jobs, %v", len(held), err)
	}
	woke := longPoll(ctx, b, "w-waiter", "one")
	// Nothing marks a lease as waiting; were it late, it would find the
	// freed slot at once and still pass, so the pause only makes it stricter.
	time.Sleep(300 * time.Millisecond)
	ackedAt := time.Now()
	if _, err := a.Ack(ctx, held[0].ID, held[0].Lease.Token, nil); err != nil {
		t.Fatal(err)
	}
	at, ok := <-woke
	if !ok {
		t.Fatal("the long-poll on B got no job after the ack on A")
	}
	if d := at.Sub(ackedAt); d > time.Second {
		t.Errorf("the long-poll on B got the freed slot %v after the ack on A, want under 1s", d)
	}

	// The job w-waiter now holds is the only slot; its worker goes silent.
	silentAt := time.Now()
	woke = longPoll(ctx, a, "w-after", "one")
	if at, ok := <-woke; !ok {
		t.Fatal("no job came back after the silent worker's slot")
	} else if d := at.Sub(silentAt); d > 8*time.Second {
		// dead_after (2 s) + two ticks (0.4 s), with slack for a loaded machine.
		t.Errorf("the silent worker's slot came back after %v, want within dead-after + 2 ticks (+ slack)", d)
	}
}

// longPoll leases one job of queue through c, waiting up to 15 s, and
// sends the instant it got it (the channel closes without a job).
func longPoll(ctx context.Context, c *client.Client, worker, queue string) <-chan time.Time {
	woke := make(chan time.Time, 1)
	go func() {
		defer close(woke)
		jobs, err := c.Lease(ctx, client.LeaseRequest{WorkerID: worker, Queues: []string{queue}, Max: 1, WaitMS: 15000})
		if err == nil && len(jobs) == 1 {
			woke <- time.Now()
		}
	}()
	return woke
}

// testCapHolds works total jobs of queue capped with three workers per
// replica, each holding its jobs a moment before it acks, while a sampler
// reads the queue's running count: no sample may exceed the cap, and no
// capN+1 deliveries (lease answered to ack sent, inside the store's own
// running span) may overlap.
func testCapHolds(t *testing.T, cs []*client.Client, url string, capN, total int) {
	ctx, cancel := context.WithCancel(t.Context())
	peak, samples := 0, 0
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			if n, ok := runningIn(ctx, url, "capped"); ok {
				peak, samples = max(peak, n), samples+1
			}
		}
	}()
	got := work(t, cs, "capped", total, 20*time.Millisecond)
	cancel()
	<-sampled
	if peak > capN || samples == 0 {
		t.Errorf("running peaked at %d in %d samples, want at most %d", peak, samples, capN)
	}
	if most := mostAtOnce(got); most > capN {
		t.Errorf("%d deliveries overlapped in time under a cap of %d", most, capN)
	}
}

// delivery is one job as a test worker held it: from the lease's answer
// to the ack's sending, on the test's clock. The span lies inside the
// job's running span in the store, so deliveries that overlap here ran at
// once there.
type delivery struct {
	id, key  string
	from, to time.Time
}

// work has three workers per client lease queue (up to 2 jobs a lease,
// long-polling) and hold their jobs for hold before acking them, until
// total are acked; it returns the deliveries in the order of their acks.
// (The hold is the work itself, not a wait for something to happen.)
func work(t *testing.T, cs []*client.Client, queue string, total int, hold time.Duration) []delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var (
		mu  sync.Mutex
		got []delivery
		wg  sync.WaitGroup
	)
	for ci, c := range cs {
		for w := range 3 {
			wg.Go(func() {
				worker := fmt.Sprintf("%s-w-%d-%d", queue, ci, w)
				for {
					mu.Lock()
					finished := len(got) >= total
					mu.Unlock()
					if finished || ctx.Err() != nil {
						return
					}
					jobs, err := c.Lease(ctx, client.LeaseRequest{WorkerID: worker, Queues: []string{queue}, Max: 2, WaitMS: 500})
					if err != nil {
						return
					}
					from := time.Now()
					time.Sleep(hold) // the work
					to := time.Now()
					for _, j := range jobs {
						if _, err := c.Ack(ctx, j.ID, j.Lease.Token, nil); err != nil {
							t.Errorf("ack: %v", err)
							return
						}
						d := delivery{id: j.ID, from: from, to: to}
						if j.ConcurrencyKey != nil {
							d.key = *j.ConcurrencyKey
						}
						mu.Lock()
						got = append(got, d)
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	if len(got) != total {
		t.Fatalf("worked %d of %d jobs of %s", len(got), total, queue)
	}
	return got
}

// mostAtOnce is the most deliveries open at once: their ends swept in
// time order, an end before a start at the same instant.
func mostAtOnce(ds []delivery) int {
	type edge struct {
		at   time.Time
		open int
	}
	var edges []edge
	for _, d := range ds {
		edges = append(edges, edge{d.from, 1}, edge{d.to, -1})
	}
	slices.SortFunc(edges, func(x, y edge) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.open - y.open
	})
	open, most := 0, 0
	for _, e := range edges {
		open += e.open
		most = max(most, open)
	}
	return most
}

// runningIn reads queue's running count from GET /v1/queues.
func runningIn(ctx context.Context, url, queue string) (int, bool) {
	req, err := http.NewRequestWithContext(ctx, "GET", url+"/v1/queues", nil)
	if err != nil {
		return 0, false
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	var v struct {
		Queues []struct {
			Name    string `json:"name"`
			Running int    `json:"running"`
		} `json:"queues"`
	}
	if json.NewDecoder(res.Body).Decode(&v) != nil {
		return 0, false
	}
	for _, q := range v.Queues {
		if q.Name == queue {
			return q.Running, true
		}
	}
	return 0, true
}
