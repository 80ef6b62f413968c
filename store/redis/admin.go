package redis

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobGet returns a job with its attempts, read in one snapshot.
func (s *Store) JobGet(ctx context.Context, p *store.JobGetParams) (*store.Job, error) {
	st, err := s.run(ctx, "get", p.ID, store.MaxAttemptsShown)
	if err != nil {
		return nil, err
	}
	j, f, err := decodeJob(st.rest[0])
	if err != nil {
		return nil, err
	}
	if err := decodeAttempts(j, f, asSlice(st.rest[1])); err != nil {
		return nil, err
	}
	return j, nil
}

// listBatch is how many ids one list.lua call examines at least: a kind
// filter that matches few jobs takes several calls, each one short.
const listBatch = 200

// JobList lists jobs newest first. UUIDv7 ids are time-ordered, so the
// per-queue, per-state id indexes are the order and the cursor is an id.
func (s *Store) JobList(ctx context.Context, p *store.JobListParams) ([]*store.Job, error) {
	limit := store.LimitOr(p.Limit, store.DefaultListLimit)
	jobs := make([]*store.Job, 0, min(limit, listBatch))
	cursor := p.Cursor
	budget := store.NewBudget(p.MaxBytes)
	for len(jobs) < limit {
		v, err := s.call(ctx, "list", p.Queue, string(p.State), p.Kind, cursor, max(limit, listBatch), limit-len(jobs),
			"", budget.Left(), p.Schedule)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		r := asSlice(v)
		page, err := decodeJobs(r[0])
		if err != nil {
			return nil, err
		}
		for _, j := range page {
			jobs = append(jobs, j)
			if budget.Spend(j) {
				return jobs, nil
			}
		}
		cursor = asString(r[1])
		if done, _ := r[2].(int64); done == 1 {
			break
		}
	}
	return jobs, nil
}

// JobCancel cancels a waiting job, or requests cancellation of a running one.
func (s *Store) JobCancel(ctx context.Context, p *store.JobCancelParams) (*store.Job, error) {
	return s.oneJob(ctx, "cancel", p.ID, unixMS(store.Trunc(p.Now)))
}

// JobRetry puts a dead or cancelled job back in the queue.
func (s *Store) JobRetry(ctx context.Context, p *store.JobRetryParams) (*store.Job, error) {
	payload := ""
	if p.Payload != nil {
		payload = payloadArg(p.Payload)
	}
	return s.oneJob(ctx, "retry", p.ID, unixMS(store.Trunc(p.Now)), payload)
}

// JobRun makes a scheduled job available now.
func (s *Store) JobRun(ctx context.Context, p *store.JobRunParams) (*store.Job, error) {
	return s.oneJob(ctx, "run", p.ID, unixMS(store.Trunc(p.Now)))
}

// JobDelete removes a job that is not running, with its history.
func (s *Store) JobDelete(ctx context.Context, p *store.JobDeleteParams) error {
	_, err := s.run(ctx, "delete", p.ID)
	return err
}

// oneJob runs a script that replies with one job.
func (s *Store) oneJob(ctx context.Context, name string, args ...any) (*store.Job, error) {
	st, err := s.run(ctx, name, args...)
	if err != nil {
		return nil, err
	}
	j, _, err := decodeJob(st.rest[0])
	return j, err
}
