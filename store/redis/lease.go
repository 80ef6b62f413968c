package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobLease leases up to Max jobs with one script, which also records the
// worker's sign of life. It reads each queue's available set from the
// front, so a lease costs O(Max × queues), not O(backlog). A kind filter
// walks a queue until it has Max matches or has looked at 10,000 jobs (a
// script holds up the whole server), so a kind that only waits behind a
// longer backlog of other kinds is leased once that backlog shrinks.
func (s *Store) JobLease(ctx context.Context, p *store.JobLeaseParams) ([]*store.Job, error) {
	// 128 bits for the tokens, 112 for the attempt ids (4 hex digits of
	// counter follow).
	nonce := make([]byte, 30)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("lease nonce: %w", err)
	}
	args := make([]any, 0, 6+len(p.Queues)+len(p.Kinds))
	args = append(args, unixMS(store.Trunc(p.Now)), p.WorkerID, max(p.Max, 0), len(p.Queues))
	for _, q := range p.Queues {
		args = append(args, q)
	}
	args = append(args, len(p.Kinds))
	for _, k := range p.Kinds {
		args = append(args, k)
	}
	args = append(args, hex.EncodeToString(nonce[:16]), hex.EncodeToString(nonce[16:]), store.Micros(p.Now))
	st, err := s.run(ctx, "lease", args...)
	if err != nil {
		return nil, fmt.Errorf("lease jobs in %q: %w", p.Queues, err)
	}
	if len(st.rest) > 1 {
		s.wakeLater(st.rest[1], p.Now)
	}
	return decodeJobs(st.rest[0])
}

func decodeJobs(v any) ([]*store.Job, error) {
	list := asSlice(v)
	jobs := make([]*store.Job, 0, len(list))
	for _, r := range list {
		j, _, err := decodeJob(r)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}
