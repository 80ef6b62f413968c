package sqlite

import "context"

// writeChunk is the most jobs (or keys, workers, nodes) one maintenance
// transaction changes. The store has one writer, held from BEGIN to
// COMMIT, and every lease, settle and enqueue waits for it; ending a job
// costs some tens of µs of it (the row, its indexes, its history), so a chunk
// holds the writer for about 5 ms, and the writes waiting behind it go
// between two chunks. A maintenance call of 1,000 jobs is then ten short
// transactions rather than one of 50 ms or more.
const writeChunk = 100

// inChunks runs step in write transactions, each offered at most
// writeChunk of the limit items, until a step handles fewer than it was
// offered or the limit is reached. It returns what the committed steps
// handled: an error ends the loop, and the chunk it rolled back adds
// nothing.
func inChunks[T any](ctx context.Context, s *Store, limit int, step func(tx *txn, n int) (done []T, wake bool, err error)) ([]T, error) {
	var out []T
	for len(out) < limit {
		n := min(writeChunk, limit-len(out))
		var done []T
		err := s.tx(ctx, func(tx *txn) (bool, error) {
			var wake bool
			var err error
			done, wake, err = step(tx, n)
			return wake, err
		})
		if err != nil {
			return out, err
		}
		out = append(out, done...)
		if len(done) < n {
			break
		}
	}
	return out, nil
}
