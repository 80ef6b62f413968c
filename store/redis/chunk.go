package redis

import "context"

// scriptChunk is the most jobs (or workers) one maintenance script run
// changes. redis-server runs one script at a time and nothing else
// meanwhile; ending or deleting a job costs it 20-50 µs, so a run of 100
// blocks the other clients a few milliseconds, where a run of 1,000 held
// them 50 ms.
const scriptChunk = 100

// inChunks runs step, offered at most scriptChunk of the limit items a
// run, until a run handles fewer than it was offered or the limit is
// reached, and returns how many items the runs handled.
func inChunks(ctx context.Context, limit int, step func(ctx context.Context, n int) (int, error)) (int, error) {
	total := 0
	for total < limit {
		n := min(scriptChunk, limit-total)
		done, err := step(ctx, n)
		total += done
		if err != nil || done < n {
			return total, err
		}
	}
	return total, nil
}
