package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tetherq/tether/store"
)

// scheduleFile is the --schedules file: {"schedules": [spec with name, …]}.
type scheduleFile struct {
	Schedules []json.RawMessage `json:"schedules"`
}

// DecodeScheduleFile reads a schedules file: unknown fields, a spec the
// API would refuse, or a name given twice are errors naming the field
// ("schedules[2].cron").
func DecodeScheduleFile(r io.Reader) ([]store.ScheduleSpec, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var f scheduleFile
	if err := decodeStrict(data, &f, ""); err != nil {
		return nil, err
	}
	specs := make([]store.ScheduleSpec, 0, len(f.Schedules))
	seen := map[string]bool{}
	for i, raw := range f.Schedules {
		prefix := fmt.Sprintf("schedules[%d].", i)
		s, err := decodeScheduleSpec(raw, prefix, "")
		if err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, invalid(prefix+"name", "names a schedule given before")
		}
		seen[s.Name] = true
		specs = append(specs, s)
	}
	return specs, nil
}

// ScheduleFileResult is what ApplyScheduleFile wrote.
type ScheduleFileResult struct {
	Written []string // file schedules created or replaced
	Paused  []string // file schedules no longer in the file, paused now
}

// ApplyScheduleFile reconciles the store with the file's specs at now.
// Every file schedule whose spec changed is written (store.ScheduleUpsert
// with IfChanged, so of replicas starting together one writes and the
// others find its spec hash); a file schedule the file no longer names
// is paused by writing its spec paused, never deleted. Since the paused
// spec hashes apart from the file's, a schedule put back in the file is
// written again, and resumed. A schedule of the API's with a file
// schedule's name becomes the file's. It stops at the first store error.
func ApplyScheduleFile(ctx context.Context, st store.Store, specs []store.ScheduleSpec, now time.Time) (*ScheduleFileResult, error) {
	res := &ScheduleFileResult{}
	named := make(map[string]bool, len(specs))
	for _, spec := range specs {
		named[spec.Name] = true
		if ok, err := upsertFile(ctx, st, spec, now); err != nil {
			return res, err
		} else if ok {
			res.Written = append(res.Written, spec.Name)
		}
	}
	list, err := st.ScheduleList(ctx, &store.ScheduleListParams{})
	if err != nil {
		return res, fmt.Errorf("list schedules: %w", err)
	}
	for _, s := range list {
		// Already paused: dropped before, or paused by an admin.
		if s.Source != store.SourceFile || named[s.Name] || s.Paused {
			continue
		}
		spec := s.ScheduleSpec
		spec.Paused = true
		if ok, err := upsertFile(ctx, st, spec, now); err != nil {
			return res, err
		} else if ok {
			res.Paused = append(res.Paused, s.Name)
		}
	}
	return res, nil
}

func upsertFile(ctx context.Context, st store.Store, spec store.ScheduleSpec, now time.Time) (bool, error) {
	r, err := st.ScheduleUpsert(ctx, &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceFile, IfChanged: true, Now: now})
	if err != nil {
		return false, fmt.Errorf("write file schedule %q: %w", spec.Name, err)
	}
	return r.Changed, nil
}
