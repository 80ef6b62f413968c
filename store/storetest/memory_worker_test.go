package storetest_test

import (
	"cmp"
	"context"
	"slices"

	"github.com/tetherq/tether/store"
)

// The reference store's nodes, queues, stats and workers.

func (m *mem) NodeHeartbeat(_ context.Context, p *store.NodeHeartbeatParams) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes[p.ID] = &store.Node{ID: p.ID, Version: p.Version, StartedAt: store.Trunc(p.StartedAt), LastHeartbeatAt: store.Trunc(p.Now)}
	return nil
}

func (m *mem) NodeList(context.Context, *store.NodeListParams) ([]*store.Node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*store.Node
	for _, n := range m.nodes {
		c := *n
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *store.Node) int { return b.LastHeartbeatAt.Compare(a.LastHeartbeatAt) })
	return out, nil
}

func (m *mem) queue(name string) *store.Queue {
	q := &store.Queue{Name: name, Paused: m.paused[name], Counts: map[store.State]int64{}}
	for _, j := range m.jobs {
		if j.Queue != name {
			continue
		}
		q.Counts[j.State]++
		if j.State == store.StateScheduled && j.Attempt > 0 {
			q.Retrying++
		}
		if j.State == store.StateAvailable && (q.OldestAvailableAt == nil || j.RunAt.Before(*q.OldestAvailableAt)) {
			at := j.RunAt
			q.OldestAvailableAt = &at
		}
	}
	return q
}

func (m *mem) QueueList(context.Context, *store.QueueListParams) ([]*store.Queue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := map[string]bool{}
	for _, j := range m.jobs {
		names[j.Queue] = true
	}
	for n, p := range m.paused {
		names[n] = names[n] || p
	}
	var out []*store.Queue
	for n, ok := range names {
		if ok {
			out = append(out, m.queue(n))
		}
	}
	slices.SortFunc(out, func(a, b *store.Queue) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *mem) QueueSetPaused(_ context.Context, p *store.QueueSetPausedParams) (*store.Queue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.paused[p.Name] = p.Paused
	if !p.Paused {
		m.hub.Signal()
	}
	return m.queue(p.Name), nil
}

func (m *mem) StatsGet(context.Context, *store.StatsGetParams) (*store.Stats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &store.Stats{Jobs: map[store.State]int64{}}
	for _, j := range m.jobs {
		s.Jobs[j.State]++
		s.RescuesTotal += int64(j.Rescues)
	}
	return s, nil
}

func (m *mem) WorkerDeregister(_ context.Context, p *store.WorkerDeregisterParams) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.workers[p.ID]; !ok {
		return store.ErrNotFound
	}
	for _, j := range m.jobs {
		if j.State == store.StateRunning && j.Lease.WorkerID == p.ID {
			m.end(j, store.DecideParams{Ending: store.EndRelease, Now: p.Now}, nil)
		}
	}
	delete(m.workers, p.ID)
	return nil
}

func (m *mem) WorkerHeartbeat(_ context.Context, p *store.WorkerHeartbeatParams) (*store.WorkerHeartbeatResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.touch(p.ID, store.Trunc(p.Now))
	res := &store.WorkerHeartbeatResult{}
	lost := map[string]bool{}
	for _, id := range append(w.taken, p.InFlight...) {
		j, ok := m.jobs[id]
		if !lost[id] && (!ok || j.State != store.StateRunning || j.Lease.WorkerID != p.ID) {
			lost[id] = true
			res.Lost = append(res.Lost, id)
		}
	}
	w.taken = nil
	for _, j := range m.jobs {
		if j.State == store.StateRunning && j.Lease.WorkerID == p.ID && j.CancelRequested {
			res.Cancel = append(res.Cancel, j.ID)
		}
	}
	return res, nil
}

func (m *mem) WorkerList(_ context.Context, p *store.WorkerListParams) ([]*store.Worker, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*store.Worker
	for _, w := range m.workers {
		if w.LastHeartbeatAt.Before(p.SeenAfter) {
			continue
		}
		c := w.Worker
		c.InFlight = nil
		for _, j := range m.jobs {
			if j.State == store.StateRunning && j.Lease.WorkerID == w.ID {
				c.InFlight = append(c.InFlight, j.ID)
			}
		}
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *store.Worker) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func (m *mem) WorkerRegister(_ context.Context, p *store.WorkerRegisterParams) (*store.Worker, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.touch(p.ID, store.Trunc(p.Now))
	w.Queues, w.Labels = slices.Clone(p.Queues), p.Labels
	c := w.Worker
	return &c, nil
}
