package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
)

// config is the server's configuration after flags and environment.
type config struct {
	addr               string
	store              string
	deadAfter          time.Duration
	heartbeatInterval  time.Duration
	tick               time.Duration
	maxBody            byteSize
	bodyTimeout        time.Duration
	retentionSucceeded time.Duration
	retentionDead      time.Duration
	maxRescues         int
	nodeID             string
	schedulesFile      string
	schedules          []store.ScheduleSpec // read from schedulesFile
	security
}

// parseConfig reads the flags in args; a flag not given takes its TETHER_*
// variable from getenv (--dead-after ↔ TETHER_DEAD_AFTER), then its default.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	c := config{maxBody: 1 << 20}
	fs := c.flagSet()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(out, fs)
			return c, err
		}
		return c, fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	if err := applyEnv(fs, getenv); err != nil {
		return c, err
	}
	if c.nodeID == "" {
		c.nodeID = defaultNodeID()
	}
	if c.heartbeatInterval == 0 {
		// Three intervals to death, as store.DefaultHeartbeatInterval is to
		// store.DefaultDeadAfter, so a shorter --dead-after alone works.
		c.heartbeatInterval = c.deadAfter / 3
	}
	if err := c.check(); err != nil {
		return c, err
	}
	var err error
	if c.schedules, err = loadSchedules(c.schedulesFile); err != nil {
		return c, err
	}
	return c, c.security.load(c.addr)
}

// flagSet defines the server's flags over c's fields.
func (c *config) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	// Errors go back to main, which prints them once; parseConfig prints
	// --help, in full.
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address (port 0 picks a free one)")
	fs.StringVar(&c.store, "store", "sqlite:tether.db", "where jobs live: sqlite:PATH, postgres://…, redis://… or rediss://… (see Stores)")
	fs.DurationVar(&c.deadAfter, "dead-after", store.DefaultDeadAfter, "silence after which a worker is dead and its jobs are recovered")
	fs.DurationVar(&c.heartbeatInterval, "heartbeat-interval", 0, "heartbeat interval told to workers (default a third of --dead-after: 5s)")
	fs.DurationVar(&c.tick, "tick", scheduler.DefaultTick, "scheduler period: recovery, timeouts, promotion, pruning; at most half of --dead-after")
	fs.Var(&c.maxBody, "max-body", "request body limit: a `size` in bytes, or with KiB or MiB")
	fs.DurationVar(&c.bodyTimeout, "body-timeout", api.DefaultBodyTimeout, "time a request's body may take to arrive, on every route")
	fs.DurationVar(&c.retentionSucceeded, "retention-succeeded", scheduler.DefaultRetentionSucceeded, "how long succeeded and cancelled jobs are kept")
	fs.DurationVar(&c.retentionDead, "retention-dead", scheduler.DefaultRetentionDead, "how long dead jobs are kept")
	fs.IntVar(&c.maxRescues, "max-rescues", store.DefaultMaxRescues, "rescues after which a job is dead (crash_loop)")
	fs.StringVar(&c.nodeID, "node-id", "", "this node's id (default hostname-pid-random)")
	fs.StringVar(&c.schedulesFile, "schedules", "", "schedules file (JSON): periodic jobs written at start, read-only over the API")
	c.security.flags(fs)
	explainValues(fs)
	return fs
}

// applyEnv sets every flag not given on the command line from its TETHER_*
// variable, through the flag's own parser so both read values alike.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		v := getenv(name)
		if given[f.Name] || v == "" || err != nil {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q (--%s): %w", name, v, f.Name, e)
		}
	})
	return err
}

// envName maps a flag to its variable: dead-after → TETHER_DEAD_AFTER.
func envName(flag string) string {
	return "TETHER_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// maxTickShare is how many ticks at least fit in --dead-after. Each tick
// renews this node's heartbeat in the store, and other replicas take a node
// silent for --dead-after for gone; with two ticks in that window one late
// tick does not make a live node look gone. A dead worker's jobs are
// rescued within --dead-after plus a tick, so at most 1.5 × --dead-after.
const maxTickShare = 2

func (c config) check() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"dead-after", c.deadAfter}, {"heartbeat-interval", c.heartbeatInterval}, {"tick", c.tick}, {"body-timeout", c.bodyTimeout},
		{"retention-succeeded", c.retentionSucceeded}, {"retention-dead", c.retentionDead},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive, not %v", d.name, d.v))
		}
	}
	if c.heartbeatInterval >= c.deadAfter {
		errs = append(errs, fmt.Errorf("--heartbeat-interval (%v) must be shorter than --dead-after (%v)", c.heartbeatInterval, c.deadAfter))
	}
	if c.tick > 0 && c.tick > c.deadAfter/maxTickShare {
		errs = append(errs, fmt.Errorf("--tick (%v) must be at most half of --dead-after (%v): every tick renews this "+
			"server's own heartbeat, which other replicas judge by --dead-after, and a dead worker's jobs wait up "+
			"to a tick beyond it", c.tick, c.deadAfter))
	}
	if c.maxRescues < 1 {
		errs = append(errs, fmt.Errorf("--max-rescues must be at least 1, not %d", c.maxRescues))
	}
	if c.maxBody <= 0 {
		errs = append(errs, errors.New("--max-body must be positive"))
	}
	return errors.Join(errs...)
}

// defaultNodeID is hostname-pid-random: unique per process even when two
// replicas share a host and a pid namespace recycles pids.
func defaultNodeID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "tether"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// byteSize is a flag of bytes: "1048576", "512KiB" or "1MiB".
type byteSize int64

func (b *byteSize) String() string {
	switch v := int64(*b); {
	case v != 0 && v%(1<<20) == 0:
		return strconv.FormatInt(v>>20, 10) + "MiB"
	case v != 0 && v%(1<<10) == 0:
		return strconv.FormatInt(v>>10, 10) + "KiB"
	default:
		return strconv.FormatInt(v, 10)
	}
}

func (b *byteSize) Set(s string) error {
	num, unit := s, int64(1)
	for suffix, u := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			num, unit = strings.TrimSpace(n), u
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/unit {
		return fmt.Errorf("invalid size %q: want bytes, or a number with KiB or MiB", s)
	}
	*b = byteSize(n * unit)
	return nil
}
