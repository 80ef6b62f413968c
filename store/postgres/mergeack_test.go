package postgres_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// Ack-only settles that arrive while one runs go out together in the next
// statement, and each caller still gets its own results: a stale token
// among them fails alone, an ack repeated by two callers is ok for both.
func TestAcksMergeWhileOneRuns(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	specs := make([]store.JobSpec, 40)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k"}
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	leased, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{store.DefaultQueue}, Max: 40, Now: now})
	if err != nil || len(leased) != 40 {
		t.Fatalf("leased %d: %v", len(leased), err)
	}
	groups := make([][]store.JobAckParams, 4)
	for i, j := range leased {
		groups[i/10] = append(groups[i/10], store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
	}
	// The last caller also acks a job of the second under a stale token,
	// and repeats the second's first ack.
	groups[3] = append(groups[3],
		store.JobAckParams{ID: groups[1][1].ID, Token: "stale"}, groups[1][0])

	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var merged []int
	s.SetAckHookForTest(func(calls int) {
		mu.Lock()
		merged = append(merged, calls)
		first := len(merged) == 1
		mu.Unlock()
		if first {
			close(entered)
			<-release
		}
	})

	results := make([][]error, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	settle := func(i int) {
		wg.Go(func() {
			results[i], errs[i] = s.JobSettle(ctx, &store.JobSettleParams{Acks: groups[i], Now: now.Add(time.Second)})
		})
	}
	settle(0)
	<-entered // the first statement is held; the rest must queue behind it
	for i := 1; i < 4; i++ {
		settle(i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.AckWaitingForTest() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d settles queued, want 3", s.AckWaitingForTest())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()

	if want := []int{1, 3}; len(merged) != 2 || merged[0] != want[0] || merged[1] != want[1] {
		t.Errorf("statements merged %v settles, want %v", merged, want)
	}
	for i := range groups {
		if errs[i] != nil {
			t.Fatalf("settle %d: %v", i, errs[i])
		}
		if len(results[i]) != len(groups[i]) {
			t.Fatalf("settle %d: %d results for %d acks", i, len(results[i]), len(groups[i]))
		}
		for k, err := range results[i] {
			want := error(nil)
			if i == 3 && k == 10 {
				want = store.ErrLeaseLost
			}
			if !errors.Is(err, want) && err != want {
				t.Errorf("settle %d ack %d: %v, want %v", i, k, err, want)
			}
		}
	}
	for _, j := range leased {
		got, err := s.JobGet(ctx, &store.JobGetParams{ID: j.ID, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.StateSucceeded {
			t.Errorf("job %s is %s after its ack", j.ID, got.State)
		}
	}
}
