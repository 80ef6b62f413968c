package scheduler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherq/tether/store"
)

// DefaultTick is how often the loop runs. A dead worker's jobs come back
// within DeadAfter plus one tick, so the tick is small next to DeadAfter.
const DefaultTick = time.Second

// tickTimeout bounds one tick. A tick runs on a context that shutdown does
// not cancel, so the tick in progress finishes; a store that hangs must not
// hold the process forever.
const tickTimeout = 30 * time.Second

// Config configures a Scheduler. Store and NodeID are required; zero values
// of the rest take the documented defaults.
type Config struct {
	Store   store.Store
	NodeID  string // this server node, the recovered_by of its rescues
	Version string // reported in the node's heartbeat

	Tick               time.Duration // DefaultTick
	DeadAfter          time.Duration // store.DefaultDeadAfter
	MaxRescues         int           // store.DefaultMaxRescues
	RetentionSucceeded time.Duration // DefaultRetentionSucceeded
	RetentionDead      time.Duration // DefaultRetentionDead

	// Now is the clock, corrected to the store's (see Clock); time.Now if nil.
	Now func() time.Time
	// Logger gets one line per task that did work, and errors; discarded if nil.
	Logger *slog.Logger
	// Registerer takes the scheduler's metrics; none are exported if nil.
	Registerer prometheus.Registerer
}

// Scheduler runs the maintenance tasks once a tick.
type Scheduler struct {
	cfg     Config
	log     *slog.Logger
	node    *nodeBeat
	tasks   []task
	metrics *metrics
}

// task is one maintenance loop; n > 0 means it did work, worth a log line
// unless did is empty (routine work done every tick).
type task struct {
	name    string // in the log line of an error
	did     string // the log message when it did work; "" for none
	runOnce func(ctx context.Context, now time.Time) (n int, err error)
}

// New checks cfg, fills its defaults and registers the metrics.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Store == nil {
		return nil, errors.New("scheduler: Store is required")
	}
	if cfg.NodeID == "" {
		return nil, errors.New("scheduler: NodeID is required")
	}
	applyDefaults(&cfg)
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	node := &nodeBeat{store: cfg.Store, id: cfg.NodeID, version: cfg.Version, startedAt: cfg.Now()}
	s := &Scheduler{cfg: cfg, log: cfg.Logger, node: node, metrics: m}
	rec := &recoverer{store: cfg.Store, nodeID: cfg.NodeID, deadAfter: cfg.DeadAfter, maxRescues: cfg.MaxRescues, metrics: m}
	s.tasks = []task{
		// The node heartbeats first, so its own leases never look orphaned.
		{"node", "node registered", node.runOnce},
		{"recover", "recovered orphans", rec.runOnce},
		{"reap", "reaped timed-out jobs", (&reaper{store: cfg.Store, metrics: m}).runOnce},
		{"schedule", "fired schedules", (&firer{store: cfg.Store, tick: cfg.Tick, metrics: m}).runOnce},
		{"promote", "promoted scheduled jobs", (&promoter{store: cfg.Store}).runOnce},
		{"prune", "pruned finished jobs", (&pruner{store: cfg.Store, succeeded: cfg.RetentionSucceeded, dead: cfg.RetentionDead}).runOnce},
		{"keys", "pruned expired keys", (&keyPruner{store: cfg.Store}).runOnce},
		{"silent", "forgot silent workers and nodes", (&silentPruner{store: cfg.Store, silent: cfg.RetentionSucceeded}).runOnce},
		// Last, so that the tick's own changes are counted by its end.
		{"counts", "", (&countFolder{store: cfg.Store}).runOnce},
		{"throughput", "", (&throughputRoller{store: cfg.Store}).runOnce},
		{"depth", "", (&depthSampler{store: cfg.Store}).runOnce},
		{"minutes", "", (&minuteRoller{store: cfg.Store}).runOnce},
	}
	return s, nil
}

func applyDefaults(c *Config) {
	c.Tick = orDefault(c.Tick, DefaultTick)
	c.DeadAfter = orDefault(c.DeadAfter, store.DefaultDeadAfter)
	c.RetentionSucceeded = orDefault(c.RetentionSucceeded, DefaultRetentionSucceeded)
	c.RetentionDead = orDefault(c.RetentionDead, DefaultRetentionDead)
	if c.MaxRescues <= 0 {
		c.MaxRescues = store.DefaultMaxRescues
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Run ticks until ctx is done, then returns nil once the tick in progress
// has finished and the node has recorded its stop. The first tick runs at
// once, so a starting node registers and recovers without waiting.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	defer s.stop(ctx)
	for {
		s.Tick(ctx)
		// Checked apart from the select, which picks at random when the
		// ticker fired too: no new tick starts after shutdown.
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// stop records the node's stop; a failure is logged, and other nodes then
// see the node gone after DeadAfter instead.
func (s *Scheduler) stop(ctx context.Context) {
	if err := s.node.stop(ctx, s.cfg.Now()); err != nil {
		s.log.Error("scheduler could not record the node's stop", "err", err)
		return
	}
	s.log.Info("node stopped")
}

// Tick runs every task once at the current time. A failing task is logged
// and does not stop the others. Cancelling ctx does not interrupt the tick.
func (s *Scheduler) Tick(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tickTimeout)
	defer cancel()
	now := s.cfg.Now()
	for _, t := range s.tasks {
		n, err := t.runOnce(ctx, now)
		if n > 0 && t.did != "" {
			s.log.Info(t.did, "n", n)
		}
		if err != nil {
			s.log.Error("scheduler task failed", "task", t.name, "err", err)
		}
	}
}

// inBatches calls batch until it handles fewer than limit items, or
// maxBatches times, and returns the items handled in all. Bounding the calls
// keeps one tick short under a backlog; the next tick goes on.
func inBatches(limit, maxBatches int, batch func(limit int) (int, error)) (int, error) {
	total := 0
	for range maxBatches {
		n, err := batch(limit)
		total += n
		if err != nil || n < limit {
			return total, err
		}
	}
	return total, nil
}
