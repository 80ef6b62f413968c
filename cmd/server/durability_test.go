package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// TestAcknowledgedEnqueuesSurviveKill kills the server with SIGKILL under
// concurrent enqueues: every enqueue that was answered 201 is there after a
// restart on the same file.
func TestAcknowledgedEnqueuesSurviveKill(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "t.db")
	srv := startServer(t, db)
	c := newClient(srv.url)

	const producers, killAfter = 4, 400
	var (
		mu    sync.Mutex
		acked []string
	)
	enough := make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				j, err := c.Enqueue(ctx, client.JobSpec{Kind: "durable", Queue: "durable", Payload: []byte(fmt.Sprintf(`{"p":%d,"i":%d}`, p, i))})
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked = append(acked, j.ID)
				if len(acked) == killAfter {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatal("not enough enqueues answered within 30s")
	}
	_ = srv.signal(t, syscall.SIGKILL) // mid-way: the producers are still sending
	wg.Wait()

	srv = startServer(t, db)
	c = newClient(srv.url)
	missing := 0
	for _, id := range acked {
		if _, err := c.GetJob(t.Context(), id); err != nil {
			missing++
			if !errors.Is(err, client.ErrNotFound) {
				t.Fatal(err)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged enqueues are gone after the restart", missing, len(acked))
	}
	t.Logf("%d acknowledged enqueues survived SIGKILL", len(acked))
}
