package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
)

// loadSchedules reads the --schedules file, "" for none. A file the API
// would refuse stops the server before it opens the store.
func loadSchedules(path string) ([]store.ScheduleSpec, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--schedules: %w", err)
	}
	defer f.Close()
	specs, err := api.DecodeScheduleFile(f)
	if err != nil {
		return nil, fmt.Errorf("--schedules %s: %w", path, err)
	}
	return specs, nil
}

// applySchedules writes the file's schedules to the store at start, when
// the server has a file: without --schedules, file schedules already in
// the store are left as they are.
func applySchedules(ctx context.Context, cfg config, st store.Store, now time.Time, log *slog.Logger) error {
	if cfg.schedulesFile == "" {
		return nil
	}
	res, err := api.ApplyScheduleFile(ctx, st, cfg.schedules, now)
	if err != nil {
		return fmt.Errorf("--schedules %s: %w", cfg.schedulesFile, err)
	}
	if len(res.Written)+len(res.Paused) > 0 {
		log.Info("schedules file applied", "file", cfg.schedulesFile, "written", res.Written, "paused", res.Paused)
	}
	return nil
}
