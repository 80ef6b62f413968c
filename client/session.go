package client

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// session is one Run of a Runner: its worker, its running jobs, its stop.
type session struct {
	c       *Client
	h       Handler
	log     *slog.Logger
	id      string
	queues  []string
	kinds   []string
	grace   time.Duration
	cleanup time.Duration

	slots    chan struct{} // one token per running job, Concurrency in all
	tasks    sync.WaitGroup
	interval atomic.Int64 // the heartbeat interval, in nanoseconds

	// draining is closed when the stop begins; settleCtx ends
	// cleanupTimeout after the grace, and with it the last retries.
	draining  chan struct{}
	settleCtx context.Context
	giveUp    context.CancelFunc

	mu      sync.Mutex
	held    map[string]*task // running handlers by job id
	outcome *Outcome         // the job's end, for RunOnce
	err     error            // the first fatal answer
	stop    context.CancelCauseFunc
}

func newSession(r *Runner) *session {
	s := &session{
		c: r.Client, h: r.Handler, log: r.Logger, id: r.WorkerID,
		queues: r.Queues, kinds: r.Kinds, grace: r.Grace,
		slots:    make(chan struct{}, min(max(r.Concurrency, 1), maxLease)),
		draining: make(chan struct{}),
		held:     map[string]*task{},
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.id == "" {
		s.id = defaultWorkerID()
	}
	if len(s.queues) == 0 {
		s.queues = []string{"default"}
	}
	if s.grace <= 0 {
		s.grace = DefaultGrace
	}
	s.cleanup = cmp.Or(r.cleanup, cleanupTimeout)
	s.settleCtx, s.giveUp = context.WithCancel(context.Background())
	s.setInterval(0)
	return s
}

// setInterval takes the server's heartbeat interval; 0 keeps the current
// one (defaultHeartbeat at first).
func (s *session) setInterval(ms int64) {
	switch {
	case ms > 0:
		s.interval.Store(int64(time.Duration(ms) * time.Millisecond))
	case s.interval.Load() == 0:
		s.interval.Store(int64(defaultHeartbeat))
	}
}

func (s *session) heartbeatInterval() time.Duration { return time.Duration(s.interval.Load()) }

// fatal records err as Run's answer and stops leasing.
func (s *session) fatal(err error) {
	s.mu.Lock()
	first := s.err == nil
	if first {
		s.err = err
	}
	s.mu.Unlock()
	if first {
		s.log.Error("the server refused the runner; stopping", "err", err)
	}
	s.stop(err)
}

func (s *session) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// hold records t as running. A task already held for the same job is a
// delivery the server has since taken back and handed out again: lost.
func (s *session) hold(t *task) {
	s.mu.Lock()
	old := s.held[t.job.ID]
	s.held[t.job.ID] = t
	s.mu.Unlock()
	if old != nil {
		old.markLost()
		// The heartbeat's lost list may still name the old delivery; the
		// new one learns of a real loss from its next extend.
		t.ignoreLost.Store(true)
	}
}

func (s *session) unhold(t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[t.job.ID] == t {
		delete(s.held, t.job.ID)
	}
}

func (s *session) task(id string) *task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[id]
}

// heldIDs are the jobs the worker believes it holds, for the heartbeat's
// in_flight: the server names in lost any it does not.
func (s *session) heldIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.held))
	for id, t := range s.held {
		if !t.lost.Load() {
			ids = append(ids, id)
		}
	}
	return ids
}

func (s *session) cancelAll(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.held {
		t.cancel(cause)
	}
}

func (s *session) record(o *Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcome = o
}
