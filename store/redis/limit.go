package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/tetherq/tether/store"
)

// QueueSetLimits writes the queue's limits with one script (limits.lua).
// Nothing needs marking: the lease counts a queue's running jobs from its
// running set and each key's from its key's running set, which every
// lease and ending keeps with the job's state.
func (s *Store) QueueSetLimits(ctx context.Context, p *store.QueueSetLimitsParams) (*store.Queue, error) {
	limits := p.Limits
	if limits.None() {
		limits = nil
	}
	encoded, slots := "", "0"
	if limits != nil {
		b, err := json.Marshal(limits)
		if err != nil {
			return nil, err
		}
		encoded = string(b)
		if limits.Slots() {
			slots = "1"
		}
	}
	if _, err := s.run(ctx, "limits", p.Name, encoded, slots); err != nil {
		return nil, fmt.Errorf("set limits of %q: %w", p.Name, err)
	}
	_, queues, err := s.queues(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	return queues[0], nil
}

// decodeLimits reads queues.lua's limits field: false for none.
func decodeLimits(v any) (*store.Limits, error) {
	encoded, ok := v.(string)
	if !ok {
		return nil, nil
	}
	var l store.Limits
	if err := json.Unmarshal([]byte(encoded), &l); err != nil {
		return nil, fmt.Errorf("decode limits: %w", err)
	}
	return &l, nil
}

// decodeThrottles reads queues.lua's throttle counts: reason, count pairs.
func decodeThrottles(v any) map[store.ThrottleReason]int64 {
	flat := asSlice(v)
	if len(flat) == 0 {
		return nil
	}
	out := make(map[store.ThrottleReason]int64, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		n, _ := strconv.ParseInt(asString(flat[i+1]), 10, 64)
		out[store.ThrottleReason(asString(flat[i]))] = n
	}
	return out
}

// wakeLater sets the timed wake-ups lease.lua asked for: (queue,
// microseconds) pairs, when a rate that held a job back refills.
func (s *Store) wakeLater(v any, now time.Time) {
	flat := asSlice(v)
	for i := 0; i+1 < len(flat); i += 2 {
		us, _ := strconv.ParseInt(asString(flat[i+1]), 10, 64)
		s.wake.SignalAfter(asString(flat[i]), store.FromMicros(us).Sub(now))
	}
}
