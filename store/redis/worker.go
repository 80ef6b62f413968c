package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tetherq/tether/store"
)

// WorkerRegister registers or refreshes a worker.
func (s *Store) WorkerRegister(ctx context.Context, p *store.WorkerRegisterParams) (*store.Worker, error) {
	queues := orEmpty(p.Queues)
	labels := p.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	qs, _ := json.Marshal(queues)
	lb, _ := json.Marshal(labels)
	now := store.Trunc(p.Now)
	v, err := s.call(ctx, "register", p.ID, unixMS(now), string(qs), string(lb))
	if err != nil {
		return nil, fmt.Errorf("register worker %q: %w", p.ID, err)
	}
	return &store.Worker{ID: p.ID, Queues: queues, Labels: labels, StartedAt: msTime(asString(v)),
		LastHeartbeatAt: now, InFlight: []string{}}, nil
}

// WorkerHeartbeat records a sign of life and reports cancelled and lost
// jobs, each lost job once.
func (s *Store) WorkerHeartbeat(ctx context.Context, p *store.WorkerHeartbeatParams) (*store.WorkerHeartbeatResult, error) {
	args := []any{p.ID, unixMS(store.Trunc(p.Now))}
	for _, id := range p.InFlight {
		args = append(args, id)
	}
	v, err := s.call(ctx, "heartbeat", args...)
	if err != nil {
		return nil, fmt.Errorf("heartbeat of %q: %w", p.ID, err)
	}
	r := asSlice(v)
	res := &store.WorkerHeartbeatResult{Cancel: strs(r[0]), Lost: strs(r[1])}
	slices.Sort(res.Cancel)
	slices.Sort(res.Lost)
	return res, nil
}

// WorkerDeregister removes a worker and releases its jobs at once.
func (s *Store) WorkerDeregister(ctx context.Context, p *store.WorkerDeregisterParams) error {
	if _, err := s.run(ctx, "deregister", p.ID, unixMS(store.Trunc(p.Now))); err != nil {
		return fmt.Errorf("deregister %q: %w", p.ID, err)
	}
	return nil
}

// WorkerList lists workers heard from since SeenAfter, by id, with the jobs
// they hold.
func (s *Store) WorkerList(ctx context.Context, p *store.WorkerListParams) ([]*store.Worker, error) {
	since := "-inf"
	if !p.SeenAfter.IsZero() {
		since = unixMS(p.SeenAfter)
	}
	v, err := s.call(ctx, "workers", since)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	var out []*store.Worker
	for _, row := range asSlice(v) {
		f := asSlice(row)
		w := &store.Worker{ID: asString(f[0]), LastHeartbeatAt: msTime(asString(f[1])),
			StartedAt: msTime(asString(f[2])), InFlight: strs(f[5])}
		if json.Unmarshal([]byte(asString(f[3])), &w.Queues) != nil || w.Queues == nil {
			w.Queues = []string{}
		}
		if json.Unmarshal([]byte(asString(f[4])), &w.Labels) != nil || w.Labels == nil {
			w.Labels = map[string]string{}
		}
		slices.Sort(w.InFlight)
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *store.Worker) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func strs(v any) []string {
	list := asSlice(v)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, asString(x))
	}
	return out
}

func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
