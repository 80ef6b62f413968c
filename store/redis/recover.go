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
// script run; each orphan's rescue is its own compare-and-set, and an
// orphan another replica won is skipped.
//
// Each run is a MULTI with the HGETALL of its orphans right after the
// script, so the jobs it returns are as the script left them, sent by
// Redis straight from the hashes: building them as Lua replies cost
// redis-server a fifth of the rescue. The hashes of orphans another replica
// won are read for nothing. The transactions of all chunks go in one round
// trip and each runs alone, so other clients' commands go between two
// chunks. Runs refused with NOSCRIPT (the server restarted) did nothing
// and go again once the script is loaded.
func (s *Store) JobRecover(ctx context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	maxRescues := p.MaxRescues
	if maxRescues <= 0 {
		maxRescues = store.DefaultMaxRescues
	}
	var chunks [][]store.Orphan
	var argLists [][]any
	for rest := p.Orphans; len(rest) > 0; {
		n := min(recoverChunk, len(rest))
		chunks, rest = append(chunks, rest[:n]), rest[n:]
		argLists = append(argLists, recoverArgs(p, maxRescues, chunks[len(chunks)-1]))
	}
	runs, err := s.callEachReading(ctx, "recover", argLists, func(k int) [][]any {
		reads := make([][]any, len(chunks[k]))
		for i, o := range chunks[k] {
			reads[i] = []any{"HGETALL", s.prefix + "j:" + o.JobID}
		}
		return reads
	})
	if err != nil {
		return nil, err
	}
	var won []*store.Job
	for k, replies := range runs {
		if len(replies) != len(chunks[k])+1 {
			return nil, fmt.Errorf("redis recover: %d replies for a chunk of %d", len(replies), len(chunks[k]))
		}
		jobs, err := wonJobs(replies[0], replies[1:], chunks[k])
		if err != nil {
			return nil, err
		}
		won = append(won, jobs...)
	}
	return won, nil
}

// recoverArgs are recover.lua's arguments for a chunk of orphans.
func recoverArgs(p *store.JobRecoverParams, maxRescues int, chunk []store.Orphan) []any {
	args := []any{unixMS(store.Trunc(p.Now)), p.NodeID, maxRescues}
	for _, o := range chunk {
		lastHB := ""
		if !o.LastHeartbeatAt.IsZero() {
			lastHB = unixMS(o.LastHeartbeatAt)
		}
		args = append(args, o.JobID, o.WorkerID, o.Token, lastHB, store.RescueMessage(o.WorkerID, p.NodeID))
	}
	return args
}

// wonJobs builds the jobs a recover.lua run won from its reply (the id and
// payload of each) and the hashes read after it, one per orphan of the
// chunk, in order.
func wonJobs(reply any, hashes []any, chunk []store.Orphan) ([]*store.Job, error) {
	st, err := parseStatus(reply)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(chunk))
	for i, o := range chunk {
		at[o.JobID] = i
	}
	var won []*store.Job
	for i := 0; i+1 < len(st.rest); i += 2 {
		id := asString(st.rest[i])
		k, ok := at[id]
		if !ok {
			return nil, fmt.Errorf("redis recover: won %q, not an orphan of the chunk", id)
		}
		won = append(won, jobFromFields(id, hashFields(hashes[k]), st.rest[i+1]))
	}
	return won, nil
}

// hashFields reads an HGETALL reply: field/value pairs under RESP2, a map
// under RESP3.
func hashFields(v any) map[string]string {
	f := map[string]string{}
	switch h := v.(type) {
	case []any:
		for i := 0; i+1 < len(h); i += 2 {
			f[asString(h[i])] = asString(h[i+1])
		}
	case map[any]any:
		for k, v := range h {
			f[asString(k)] = asString(v)
		}
	}
	return f
}
