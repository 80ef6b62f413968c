// Command server is Tether's server: the HTTP API, the dashboard and the
// scheduler loop over one store, configured by flags or TETHER_* variables.
//
//	server --addr 127.0.0.1:8080 --store sqlite:tether.db
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/scheduler"
)

// gcPercent is the server's GOGC unless the environment sets one. Its live
// heap is small (tens of MB), so Go's default of 100 collects it several
// hundred times a second under load: at 400 a Postgres burn-down spent a
// quarter less server CPU per job (27 → 20 µs) for a peak RSS of 61 MB
// instead of 36 (docs/benchmarks.md).
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "tether:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done, then shuts down gracefully. Everything the
// process needs from outside comes in as an argument, so tests run it as is.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	log := slog.New(api.LogRequestIDs(slog.NewTextHandler(stdout, nil)))
	st, err := openStore(ctx, cfg.store, log)
	if err != nil {
		return err
	}
	clock := scheduler.NewClock(st, time.Now)
	if err := clock.Sync(ctx); err != nil {
		return errors.Join(err, st.Close())
	}
	if err := applySchedules(ctx, cfg, st, clock.Now(), log); err != nil {
		return errors.Join(err, st.Close())
	}
	srv, err := newServer(cfg, st, clock, log, version())
	if err != nil {
		return errors.Join(err, st.Close())
	}
	err = srv.serve(ctx, stdout)
	return errors.Join(err, st.Close())
}

// version is the module version the binary was built from, "(devel)" for
// a build from a work tree.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
