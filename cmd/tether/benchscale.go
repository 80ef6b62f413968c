package main

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/client"
)

// The bench's scale modes (issue 12): jobs spread over several queues that
// every lease names, among many more queues the store holds (--queues,
// --other-queues), and producers sending one job per request (--single).

// queueNames are the queues the bench's jobs go to: queue itself, or
// queue-0 … queue-(n-1).
func queueNames(queue string, n int) []string {
	if n == 1 {
		return []string{queue}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", queue, i)
	}
	return names
}

// fillOtherQueues puts one job in each of cfg.otherQueues queues no lease
// names, queue-other-0 …, so the store holds that many more queues, and
// returns the ids of those jobs.
func fillOtherQueues(ctx context.Context, c *client.Client, queue string, cfg benchConfig) ([]string, error) {
	var ids []string
	for first := 0; first < cfg.otherQueues; first += enqueueBatch {
		var specs []client.JobSpec
		for i := first; i < min(first+enqueueBatch, cfg.otherQueues); i++ {
			specs = append(specs, client.JobSpec{Kind: "bench-other", Queue: fmt.Sprintf("%s-other-%d", queue, i)})
		}
		jobs, err := c.EnqueueBatch(ctx, specs)
		if err != nil {
			return ids, err
		}
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
	}
	return ids, nil
}

// enqueue sends specs in one call: POST /v1/jobs for one spec, the batch
// endpoint for more.
func enqueue(ctx context.Context, c *client.Client, specs []client.JobSpec) ([]*client.Job, error) {
	if len(specs) == 1 {
		j, err := c.Enqueue(ctx, specs[0])
		if err != nil {
			return nil, err
		}
		return []*client.Job{j}, nil
	}
	return c.EnqueueBatch(ctx, specs)
}

// callKind names the producers' calls in the bench's line.
func callKind(cfg benchConfig) string {
	if cfg.single {
		return "single"
	}
	return "batch"
}
