package redis

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
)

// pingEvery is how long the subscription may stay silent before it is
// pinged; a ping left unanswered for as long again means the connection is
// dead without having said so (a half-open TCP connection), and a new one
// is made.
const pingEvery = 2 * time.Second

// subscriber hands each wake-up message (store.WakeupMessage: how many
// jobs became leasable in which queue) to that queue's waiters. While it is
// disconnected (redis-server restarting, a network cut) it wakes every waiter
// every poll interval instead, so long-polls retry rather than sleep
// through a wake-up they could not hear; it signals once more when it is
// back, for what it missed.
type subscriber struct {
	rdb       *goredis.Client
	channel   string
	wake      *store.Wakeups
	poll      time.Duration
	connected atomic.Bool

	mu     sync.Mutex
	ps     *goredis.PubSub
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// subscribe subscribes to channel and waits for Redis to confirm, so that
// no wake-up published after Open returns is missed.
func subscribe(ctx context.Context, rdb *goredis.Client, channel string, wake *store.Wakeups, poll time.Duration) (*subscriber, error) {
	ps := rdb.Subscribe(ctx, channel)
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	sub := &subscriber{rdb: rdb, channel: channel, wake: wake, poll: poll, ps: ps, cancel: cancel}
	sub.connected.Store(true)
	sub.done.Go(func() { sub.listen(runCtx) })
	sub.done.Go(func() { sub.fallback(runCtx) })
	return sub, nil
}

func (s *subscriber) pubsub() *goredis.PubSub {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ps
}

// listen receives until ctx ends. go-redis redials and resubscribes on the
// next receive after an error; the confirmation of that subscription marks
// the subscriber connected again.
func (s *subscriber) listen(ctx context.Context) {
	defer func() { s.pubsub().Close() }() // a subscription renewed during close
	pinged := false
	for ctx.Err() == nil {
		msg, err := s.pubsub().ReceiveTimeout(ctx, pingEvery)
		if ctx.Err() != nil {
			return
		}
		switch m := msg.(type) {
		case *goredis.Message:
			s.wake.Signal(store.ParseWakeupMessage(m.Payload))
		case *goredis.Subscription:
			if m.Kind == "subscribe" && !s.connected.Swap(true) {
				s.wake.SignalAll()
			}
		}
		switch {
		case err == nil:
			pinged = false
		case isTimeout(err) && !pinged:
			pinged = true
			if s.pubsub().Ping(ctx) != nil {
				s.down(ctx)
			}
		case isTimeout(err):
			pinged = false
			s.renew(ctx)
		default:
			s.down(ctx)
		}
	}
}

// down marks the subscription broken and waits a poll interval before the
// next receive redials.
func (s *subscriber) down(ctx context.Context) {
	if s.connected.Swap(false) {
		s.wake.SignalAll()
	}
	select {
	case <-ctx.Done():
	case <-time.After(s.poll):
	}
}

// renew replaces a subscription whose connection stopped answering.
func (s *subscriber) renew(ctx context.Context) {
	s.connected.Store(false)
	s.mu.Lock()
	old := s.ps
	s.ps = s.rdb.Subscribe(ctx, s.channel)
	s.mu.Unlock()
	old.Close()
}

// fallback wakes every waiter every poll interval while disconnected.
func (s *subscriber) fallback(ctx context.Context) {
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !s.connected.Load() {
				s.wake.SignalAll()
			}
		}
	}
}

func (s *subscriber) close() {
	s.cancel()
	s.pubsub().Close() // ends a receive in progress
	s.done.Wait()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
