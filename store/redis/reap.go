package redis

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobReap ends running jobs past their expiry: it reads the expired ids
// from the queues' running sets by deadline, then reaps them with
// reap.lua, scriptChunk of them per run, all runs pipelined in one round
// trip; the script checks each expiry again (an extend may have come in
// between).
func (s *Store) JobReap(ctx context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	now := unixMS(store.Trunc(p.Now))
	v, err := s.call(ctx, "expired", now, store.LimitOr(p.Limit, store.MaxBatch))
	if err != nil {
		return nil, fmt.Errorf("list expired leases: %w", err)
	}
	var argLists [][]any
	for rest := strs(v); len(rest) > 0; {
		n := min(scriptChunk, len(rest))
		args := []any{now, store.ReapMessage}
		for _, id := range rest[:n] {
			args = append(args, id, jitter())
		}
		argLists, rest = append(argLists, args), rest[n:]
	}
	if len(argLists) == 0 {
		return nil, nil
	}
	replies, err := s.callEach(ctx, "reap", argLists)
	if err != nil {
		return nil, err
	}
	var jobs []*store.Job
	for _, r := range replies {
		st, err := parseStatus(r)
		if err != nil {
			return nil, err
		}
		for _, v := range st.rest {
			j, _, err := decodeJob(v)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}
