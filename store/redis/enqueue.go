package redis

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/tetherq/tether/store"
)

// inlinePayload is the largest payload kept in the job's hash. Redis keeps
// a hash compact (listpack) while every value is at most 64 bytes; a larger
// payload gets a key of its own so the hash stays compact.
const inlinePayload = 48

// enqueueFields is how many arguments enqueue.lua reads per job.
const enqueueFields = 16

// JobEnqueue inserts the jobs with one script: all or none, in order.
func (s *Store) JobEnqueue(ctx context.Context, p *store.JobEnqueueParams) (*store.JobEnqueueResult, error) {
	now := store.Trunc(p.Now)
	specs := make([]store.JobSpec, len(p.Jobs))
	ids := make([]string, len(p.Jobs))
	args := make([]any, 0, 5+enqueueFields*len(p.Jobs))
	ttl := p.IdempotencyTTL
	if ttl <= 0 {
		ttl = store.IdempotencyTTL
	}
	keys := p.IdempotencyKeys()
	ikey := ""
	if len(keys) > 0 {
		ikey = keys[0]
	}
	args = append(args, unixMS(now), ikey, p.RequestHash, ttl.Milliseconds(), len(p.Jobs))
	for i := range p.Jobs {
		sp := p.Jobs[i]
		sp.Normalize(now)
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("job id: %w", err)
		}
		specs[i], ids[i] = sp, id.String()
		args = append(args, jobArgs(ids[i], &sp)...)
	}
	if len(keys) > 1 { // AlsoKeys go after the jobs, where enqueue.lua reads them
		for _, k := range keys[1:] {
			args = append(args, k)
		}
	}
	st, err := s.run(ctx, "enqueue", args...)
	if err != nil {
		return nil, err
	}
	if st.code == "replay" {
		j, _, err := decodeJob(st.rest[0])
		if err != nil {
			return nil, err
		}
		return &store.JobEnqueueResult{Jobs: []*store.Job{j}, Existing: []bool{true}, Replayed: true}, nil
	}
	results := asSlice(st.rest[0])
	if len(results) != len(specs) {
		return nil, fmt.Errorf("redis enqueue: %d results for %d jobs", len(results), len(specs))
	}
	res := &store.JobEnqueueResult{Jobs: make([]*store.Job, len(specs)), Existing: make([]bool, len(specs))}
	for i, r := range results {
		if _, isNew := r.(int64); isNew {
			res.Jobs[i] = specs[i].NewJob(ids[i], now)
			continue
		}
		if res.Jobs[i], _, err = decodeJob(r); err != nil {
			return nil, err
		}
		res.Existing[i] = true
	}
	return res, nil
}

// jobArgs are the enqueueFields arguments of a normalized spec, as
// lib_insert.lua's insert_job reads them.
func jobArgs(id string, sp *store.JobSpec) []any {
	tags, _ := json.Marshal(sp.Tags)
	return []any{id, sp.Queue, sp.Kind, sp.Priority, unixMS(sp.RunAt), sp.MaxAttempts,
		sp.Timeout.Milliseconds(), sp.Backoff.Base.Milliseconds(), sp.Backoff.Max.Milliseconds(),
		uniqueArg(sp.UniqueKey), orNone(string(tags), "[]"), orNone(string(sp.Metadata), "{}"),
		payloadArg(sp.Payload), traceArg(sp.Trace, false), traceArg(sp.Trace, true), keyArg(sp.ConcurrencyKey)}
}

// payloadArg tells a script where a payload goes: "" none, "i" + value in
// the hash, "k" + value in a key of its own.
func payloadArg(p json.RawMessage) string {
	switch {
	case len(p) == 0:
		return ""
	case len(p) <= inlinePayload:
		return "i" + string(p)
	default:
		return "k" + string(p)
	}
}

// uniqueArg is "" for no unique_key, else "u" + the key (which may be
// empty).
func uniqueArg(k *string) string {
	if k == nil {
		return ""
	}
	return "u" + *k
}

// orNone leaves a default value out of the hash.
func orNone(v, def string) string {
	if v == def {
		return ""
	}
	return v
}

// traceArg is a trace's traceparent (or, with state, its tracestate) as
// enqueue.lua reads it: ” for none.
func traceArg(t *store.Trace, state bool) string {
	switch {
	case t == nil:
		return ""
	case state:
		return t.State
	default:
		return t.Parent
	}
}

// keyArg is a concurrency key as enqueue.lua reads it: "" for none (a key
// has at least one character).
func keyArg(k *string) string {
	if k == nil {
		return ""
	}
	return *k
}
