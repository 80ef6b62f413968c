package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tetherq/tether/store"
)

// JobAck settles a running job as succeeded.
func (s *Store) JobAck(ctx context.Context, p *store.JobAckParams) (*store.Job, error) {
	return s.oneJob(ctx, "ack", p.ID, p.Token, unixMS(store.Trunc(p.Now)), string(p.Result))
}

// JobFail ends a delivery as failed and applies the failure decisions.
func (s *Store) JobFail(ctx context.Context, p *store.JobFailParams) (*store.Job, error) {
	args := []any{p.ID, p.Token, unixMS(store.Trunc(p.Now))}
	return s.oneJob(ctx, "fail", append(args, failArgs(p)...)...)
}

// failArgs are a fail's error, no-retry flag, retry_in and jitter, as
// lib_end.lua's do_fail reads them.
func failArgs(p *store.JobFailParams) []any {
	noRetry, retryIn := "0", ""
	if p.NoRetry {
		noRetry = "1"
	}
	if p.RetryIn != nil {
		retryIn = msFloat(*p.RetryIn)
	}
	return []any{p.Error, noRetry, retryIn, jitter()}
}

// jitter is store.Jitter for a script: lib_end.lua's backoff mirrors
// store.BackoffDelay with it.
func jitter() string {
	return strconv.FormatFloat(store.Jitter(), 'g', -1, 64)
}

// JobExtend pushes a running job's expiry and records progress; it counts
// as the owner's heartbeat.
func (s *Store) JobExtend(ctx context.Context, p *store.JobExtendParams) (*store.Job, error) {
	extend, progress := "", ""
	if p.Extend > 0 {
		extend = strconv.FormatInt(p.Extend.Milliseconds(), 10)
	}
	if p.Progress != nil {
		progress = strconv.Itoa(*p.Progress)
	}
	return s.oneJob(ctx, "extend", p.ID, p.Token, unixMS(store.Trunc(p.Now)), extend, progress)
}

// JobRelease gives a running job back: attempt − 1, available or scheduled.
func (s *Store) JobRelease(ctx context.Context, p *store.JobReleaseParams) (*store.Job, error) {
	return s.oneJob(ctx, "release", p.ID, p.Token, unixMS(store.Trunc(p.Now)), msFloat(max(p.Delay, 0)))
}

// JobSettle acks, then fails, many jobs with one script: one round trip
// and one atomic step for a worker's whole batch.
func (s *Store) JobSettle(ctx context.Context, p *store.JobSettleParams) ([]error, error) {
	args := make([]any, 0, 3+3*len(p.Acks)+6*len(p.Fails))
	args = append(args, unixMS(store.Trunc(p.Now)), len(p.Acks))
	for _, a := range p.Acks {
		args = append(args, a.ID, a.Token, string(a.Result))
	}
	args = append(args, len(p.Fails))
	for i := range p.Fails {
		args = append(args, p.Fails[i].ID, p.Fails[i].Token)
		args = append(args, failArgs(&p.Fails[i])...)
	}
	st, err := s.run(ctx, "settle", args...)
	if err != nil {
		return nil, fmt.Errorf("settle %d acks and %d fails: %w", len(p.Acks), len(p.Fails), err)
	}
	codes := asSlice(st.rest[0])
	if len(codes) != len(p.Acks)+len(p.Fails) {
		return nil, fmt.Errorf("redis settle: %d results for %d items", len(codes), len(p.Acks)+len(p.Fails))
	}
	out := make([]error, len(codes))
	for i, c := range codes {
		out[i] = errCode(asString(c))
	}
	return out, nil
}
