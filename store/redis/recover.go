package redis

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobListOrphans lists running jobs of silent owners. It starts from the
// set of workers holding jobs, ordered by last sign of life, so it costs
// O(silent holders + their jobs), never O(running jobs).
func (s *Store) JobListOrphans(ctx context.Context, p *store.JobListOrphansParams) ([]store.Orphan, error) {
	args := []any{unixMS(p.DeadBefore), store.LimitOr(p.Limit, store.MaxBatch)}
	for _, id := range p.LiveIDs {
		args = append(args, id)
	}
	v, err := s.call(ctx, "orphans", args...)
	if err != nil {
		return nil, fmt.Errorf("list orphans: %w", err)
	}
	flat := asSlice(v)
	out := make([]store.Orphan, 0, len(flat)/4)
	for i := 0; i+3 < len(flat); i += 4 {
		out = append(out, store.Orphan{
			JobID: asString(flat[i]), WorkerID: asString(flat[i+1]), Token: asString(flat[i+2]),
			LastHeartbeatAt: msTime(asString(flat[i+3])),
		})
	}
	return out, nil
}

// recoverChunk is how many orphans one recover script rescues: the
// script's fixed cost is paid once per chunk, and a chunk runs for a few
// milliseconds, so other clients' commands go between two chunks.
const recoverChunk = 100

// JobRecover rescues the orphans with recover.lua, a chunk of them per
// script run, all pipelined in one round trip; each orphan's rescue is its
// own compare-and-set, and an orphan another replica won is skipped.
func (s *Store) JobRecover(ctx context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	if len(p.Orphans) == 0 {
		return nil, nil
	}
	maxRescues := p.MaxRescues
	if maxRescues <= 0 {
		maxRescues = store.DefaultMaxRescues
	}
	var argLists [][]any
	for rest := p.Orphans; len(rest) > 0; {
		chunk := rest[:min(recoverChunk, len(rest))]
		rest = rest[len(chunk):]
		args := []any{unixMS(store.Trunc(p.Now)), p.NodeID, maxRescues}
		for _, o := range chunk {
			lastHB := ""
			if !o.LastHeartbeatAt.IsZero() {
				lastHB = unixMS(o.LastHeartbeatAt)
			}
			args = append(args, o.JobID, o.WorkerID, o.Token, lastHB, store.RescueMessage(o.WorkerID, p.NodeID))
		}
		argLists = append(argLists, args)
	}
	replies, err := s.callEach(ctx, "recover", argLists)
	if err != nil {
		return nil, err
	}
	var won []*store.Job
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
			won = append(won, j)
		}
	}
	return won, nil
}

// eachJob runs a one-job script per argument list and returns the jobs of
// the runs that changed something.
func (s *Store) eachJob(ctx context.Context, name string, argLists [][]any) ([]*store.Job, error) {
	if len(argLists) == 0 {
		return nil, nil
	}
	replies, err := s.callEach(ctx, name, argLists)
	if err != nil {
		return nil, err
	}
	var jobs []*store.Job
	for _, r := range replies {
		st, err := parseStatus(r)
		if err != nil {
			return nil, err
		}
		if st.code != "ok" {
			continue
		}
		j, _, err := decodeJob(st.rest[0])
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}
