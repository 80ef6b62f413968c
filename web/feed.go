package web

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Change topics. A panel names the topics it follows; the feed names the
// topics whose aggregates changed.
const (
	topicJobs    = "jobs"    // a count by queue and state, or the rescue total
	topicQueues  = "queues"  // the set of queues, or one paused or resumed
	topicWorkers = "workers" // the set of workers, a liveness, or jobs held
	topicNodes   = "nodes"   // the set of server nodes, a liveness, or the rescue total
	// topicSchedules: a schedule written, paused, resumed, fired or deleted,
	// through any replica.
	topicSchedules = "schedules"
)

// snapshot is the state the poller compares tick to tick: one fingerprint
// per topic.
type snapshot map[string]string

// feed is the one poller of a process and the event streams it feeds. The
// poller runs only while a stream is open: every interval it reads the
// store's cheap aggregates (queue counts, worker states, stats) once,
// whatever the number of streams, and notifies every stream of the topics
// that changed since the last read, so the store sees one read a second
// and each page at most one notification a second.
type feed struct {
	read     func(ctx context.Context) (snapshot, error)
	interval time.Duration
	shutdown <-chan struct{}
	log      *slog.Logger

	mu      sync.Mutex
	subs    map[*sub]struct{}
	running bool
}

func newFeed(read func(context.Context) (snapshot, error), interval time.Duration, shutdown <-chan struct{}, log *slog.Logger) *feed {
	return &feed{read: read, interval: interval, shutdown: shutdown, log: log, subs: map[*sub]struct{}{}}
}

// sub is one event stream's mailbox: topics pile up in pending until the
// stream takes them, so a slow stream gets one merged notification rather
// than a backlog.
type sub struct {
	mu      sync.Mutex
	pending map[string]bool
	ready   chan struct{} // capacity 1: a notification is waiting
}

// take returns the pending topics, sorted, and empties the mailbox.
func (s *sub) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.pending))
	for t := range s.pending {
		out = append(out, t)
	}
	clear(s.pending)
	slices.Sort(out)
	return out
}

func (s *sub) post(topics []string) {
	s.mu.Lock()
	for _, t := range topics {
		s.pending[t] = true
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// subscribe adds a stream, starting the poller if it is the first.
func (f *feed) subscribe() *sub {
	s := &sub{pending: map[string]bool{}, ready: make(chan struct{}, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs[s] = struct{}{}
	if !f.running {
		f.running = true
		go f.poll()
	}
	return s
}

func (f *feed) unsubscribe(s *sub) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, s)
}

// poll reads a snapshot every interval and posts the changed topics, until
// no stream is left or shutdown begins.
func (f *feed) poll() {
	t := time.NewTicker(f.interval)
	defer t.Stop()
	var last snapshot
	for {
		if !f.keepRunning() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*f.interval)
		now, err := f.read(ctx)
		cancel()
		if err != nil {
			f.log.Warn("dashboard poll failed", "err", err)
		} else {
			if last != nil {
				if changed := diff(last, now); len(changed) > 0 {
					f.broadcast(changed)
				}
			}
			last = now
		}
		select {
		case <-t.C:
		case <-f.shutdown:
			f.stop()
			return
		}
	}
}

// keepRunning reports whether a stream is still open, and otherwise marks
// the poller stopped (under the same lock as subscribe, so a stream that
// arrives now starts a new one).
func (f *feed) keepRunning() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) == 0 {
		f.running = false
	}
	return f.running
}

func (f *feed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running = false
}

func (f *feed) broadcast(topics []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.post(topics)
	}
}

// diff lists the topics whose fingerprint differs, sorted.
func diff(a, b snapshot) []string {
	var out []string
	for _, t := range []string{topicJobs, topicNodes, topicQueues, topicSchedules, topicWorkers} {
		if a[t] != b[t] {
			out = append(out, t)
		}
	}
	return out
}

// fingerprint joins parts into one comparable string.
func fingerprint(parts []string) string { return strings.Join(parts, "\x1f") }
