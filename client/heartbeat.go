package client

import (
	"context"
	"fmt"
	"time"
)

// heartbeats signs the worker's life every interval until ctx ends, naming
// the jobs it holds. Each answer's cancel list (repeated while a job is
// held) ends those handlers' ctx with ErrCancelRequested; its lost list
// (each job once) ends theirs with ErrLeaseLost, and the runner will not
// settle them. A failed heartbeat is retried sooner, on the backoff's
// pace, but never later than the next beat was due.
func (s *session) heartbeats(ctx context.Context) {
	timer := time.NewTimer(s.heartbeatInterval())
	defer timer.Stop()
	var b backoff
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := s.c.Heartbeat(cctx, s.id, s.heldIDs())
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if refused(err) {
				s.fatal(fmt.Errorf("heartbeat: %w", err))
			}
			d := min(b.delay(err), s.heartbeatInterval())
			s.log.Warn("heartbeat failed, retrying", "worker", s.id, "err", err, "retry_in", d)
			timer.Reset(d)
			continue
		}
		b.reset()
		s.setInterval(res.HeartbeatIntervalMS)
		for _, id := range res.Cancel {
			if t := s.task(id); t != nil {
				t.cancel(ErrCancelRequested)
			}
		}
		for _, id := range res.Lost {
			if t := s.task(id); t != nil && !t.ignoreLost.Swap(false) {
				t.markLost()
			}
		}
		timer.Reset(s.heartbeatInterval())
	}
}
