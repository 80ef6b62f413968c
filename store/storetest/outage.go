package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// Outage is a store whose server a test can take away and bring back.
type Outage struct {
	Store store.Store
	// Cut makes the store stop answering (its server stopped, the network
	// to it cut, its file locked by another program); Restore undoes it.
	// Each returns once the change holds.
	Cut, Restore func(t *testing.T)
	// ReadsAnswer says reads still answer during the cut: on SQLite the
	// cut is another program's write lock, which WAL readers pass.
	ReadsAnswer bool
}

// RunOutage checks what every backend promises when its server does not
// answer: each call fails with an error that wraps store.ErrUnavailable
// (a read may instead succeed where ReadsAnswer), a call whose caller had
// already given up is never reported unavailable, and once the server is
// back the same Store answers again without being reopened. open returns
// a fresh store, working, with its means to cut it.
func RunOutage(t *testing.T, open func(t *testing.T) *Outage) {
	o := open(t)
	h := &harness{t: t, ctx: t.Context(), s: o.Store, clock: NewClock(Base)}
	j := h.running("w-1", spec("k", "outage"))
	calls := outageCalls(h, j)

	o.Cut(t)
	for _, c := range calls {
		err := c.call(t.Context())
		if err == nil && c.read && o.ReadsAnswer {
			continue
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s during the cut = %v, want store.ErrUnavailable", c.name, err)
		}
	}
	gaveUp, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range calls {
		if err := c.call(gaveUp); errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with its context cancelled, during the cut = %v: a caller's own cancellation is not the store's outage", c.name, err)
		}
	}

	o.Restore(t)
	for _, c := range calls {
		answered(t, c)
	}
}

// answered waits for c to succeed after a restore. A pooled connection the
// cut broke may fail one more call, and that failure too must say
// unavailable; anything else fails the test.
func answered(t *testing.T, c outageCall) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := c.call(t.Context())
		switch {
		case err == nil:
			return
		case !errors.Is(err, store.ErrUnavailable):
			t.Errorf("%s after the restore = %v, want success (or ErrUnavailable while reconnecting)", c.name, err)
			return
		case time.Now().After(deadline):
			t.Errorf("%s still fails 15 s after the restore: %v", c.name, err)
			return
		}
		time.Sleep(10 * time.Millisecond) // polling a server coming back: no signal to wait on
	}
}

// outageCall is one store call of the outage check.
type outageCall struct {
	name string
	read bool
	call func(ctx context.Context) error
}

// outageCalls are calls of every kind: reads, writes, the lease path and
// the scheduler's. j is a running job of w-1, which extends it and then,
// last, acks it.
func outageCalls(h *harness, j *store.Job) []outageCall {
	s, now := h.s, h.now()
	tok := token(h.t, j)
	ignore := func(_ any, err error) error { return err }
	return []outageCall{
		{"Ping", true, func(ctx context.Context) error { return s.Ping(ctx) }},
		{"JobGet", true, func(ctx context.Context) error { return ignore(s.JobGet(ctx, &store.JobGetParams{ID: j.ID})) }},
		{"JobList", true, func(ctx context.Context) error {
			return ignore(s.JobList(ctx, &store.JobListParams{Queue: j.Queue, Limit: 10, Now: now}))
		}},
		{"QueueList", true, func(ctx context.Context) error { return ignore(s.QueueList(ctx, &store.QueueListParams{Now: now})) }},
		{"StatsGet", true, func(ctx context.Context) error { return ignore(s.StatsGet(ctx, &store.StatsGetParams{Now: now})) }},
		{"WorkerList", true, func(ctx context.Context) error { return ignore(s.WorkerList(ctx, &store.WorkerListParams{})) }},
		{"JobListOrphans", true, func(ctx context.Context) error {
			return ignore(s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-time.Hour)}))
		}},
		{"JobEnqueue", false, func(ctx context.Context) error {
			return ignore(s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{spec("k", "other")}, Now: now}))
		}},
		{"JobLease", false, func(ctx context.Context) error {
			return ignore(s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w-2", Queues: []string{"none"}, Max: 1, Now: now}))
		}},
		{"JobExtend", false, func(ctx context.Context) error {
			return ignore(s.JobExtend(ctx, &store.JobExtendParams{ID: j.ID, Token: tok, Now: now}))
		}},
		{"WorkerHeartbeat", false, func(ctx context.Context) error {
			return ignore(s.WorkerHeartbeat(ctx, &store.WorkerHeartbeatParams{ID: "w-1", Now: now}))
		}},
		{"NodeHeartbeat", false, func(ctx context.Context) error {
			return s.NodeHeartbeat(ctx, &store.NodeHeartbeatParams{ID: "n-1", Version: "test", StartedAt: now, Now: now})
		}},
		{"QueueSetPaused", false, func(ctx context.Context) error {
			return ignore(s.QueueSetPaused(ctx, &store.QueueSetPausedParams{Name: "other", Now: now}))
		}},
		{"JobPromote", false, func(ctx context.Context) error {
			return ignore(s.JobPromote(ctx, &store.JobPromoteParams{Now: now, Limit: 10}))
		}},
		{"JobAck", false, func(ctx context.Context) error {
			return ignore(s.JobAck(ctx, &store.JobAckParams{ID: j.ID, Token: tok, Now: now}))
		}},
	}
}
