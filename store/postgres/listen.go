package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// Wake-up defaults.
const (
	// pollInterval is how often waiting leasers are woken while the
	// listener is disconnected, so a long-poll still sees new jobs when
	// notifications cannot arrive.
	pollInterval = store.WakeupPollInterval
	// minBackoff and maxBackoff bound the wait between reconnect attempts:
	// quick after a single dropped connection, gentle on a database that
	// is down.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
	// pingEvery is how long the listener waits for a notification before
	// it checks that its connection is alive; a silent network partition
	// would otherwise leave it waiting forever.
	pingEvery = 30 * time.Second
	// listenerName is the application_name of the listener connection, so
	// an operator can tell it apart in pg_stat_activity.
	listenerName = "tether-listener"
)

// listener keeps one connection LISTENing on the store's channel and
// wakes the waiters of the queue each notification names. When the connection drops it
// reconnects with backoff and, until it is back, wakes every waiter every
// pollInterval instead.
type listener struct {
	cfg     *pgx.ConnConfig
	channel string
	wake    *store.Wakeups
	changed func()
	stop    func()

	mu  sync.Mutex
	pid uint32 // the listener backend's pid; 0 while disconnected

	// refuse makes connection attempts fail, so tests can hold the
	// listener disconnected and watch the poll fallback.
	refuse atomic.Bool
}

// startListener connects the listener and returns once it is LISTENing,
// so no notification sent after Open returns can be missed. If the first
// connection fails it keeps trying in the background (polling meanwhile).
//
// changed is told of every message that wakes all of a queue's waiters (a
// resume, a change of limits), and of every fallback wake-up, before the
// waiters wake: what a lease knows of the queues may have changed.
func startListener(ctx context.Context, cfg *pgx.ConnConfig, channel string, wake *store.Wakeups, changed func()) *listener {
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = listenerName
	l := &listener{cfg: cfg, channel: channel, wake: wake, changed: changed}
	runCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	l.stop = func() {
		cancel()
		wg.Wait()
	}
	first, err := l.connect(ctx)
	wg.Go(func() { l.run(runCtx, first, err) })
	wg.Go(func() { l.poll(runCtx) })
	return l
}

// run receives notifications on conn until it fails, then reconnects.
func (l *listener) run(ctx context.Context, conn *pgx.Conn, err error) {
	backoff := minBackoff
	for {
		if err == nil {
			backoff = minBackoff
			l.receive(ctx, conn)
			l.setConnected(0)
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(closeCtx)
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		conn, err = l.connect(ctx)
		if err == nil {
			// Whatever was notified while the connection was down is lost:
			// have every waiting leaser look again.
			l.changed()
			l.wake.SignalAll()
		}
	}
}

// connect opens a connection and LISTENs on the channel.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	if l.refuse.Load() {
		return nil, errors.New("connect listener: refused (test)")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, fmt.Errorf("connect listener: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("listen on %s: %w", l.channel, err)
	}
	l.setConnected(conn.PgConn().PID())
	return conn, nil
}

// receive hands each notification (store.WakeupMessage: how many jobs
// became leasable in which queue) to the waiters of its queue, until the
// connection fails or ctx ends.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) {
	for {
		waitCtx, cancel := context.WithTimeout(ctx, pingEvery)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			q, count := store.ParseWakeupMessage(n.Payload)
			if count == 0 {
				l.changed()
			}
			l.wake.Signal(q, count)
		case ctx.Err() != nil || conn.IsClosed():
			return
		default: // waited pingEvery in silence: is the connection alive?
			pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = conn.Ping(pingCtx)
			cancel()
			if err != nil {
				return
			}
		}
	}
}

// poll wakes waiting leasers every pollInterval while the listener is
// disconnected.
func (l *listener) poll(ctx context.Context) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if l.backendPID() == 0 {
				l.changed()
				l.wake.SignalAll()
			}
		}
	}
}

func (l *listener) setConnected(pid uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pid = pid
}

// backendPID is the listener backend's pid, 0 while disconnected.
func (l *listener) backendPID() uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pid
}
