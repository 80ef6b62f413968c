package store

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// FirePlan is what one fire of a due schedule does: the slots it enqueues
// a job for, the slots it counts as missed, and the next_fire_at it leaves.
type FirePlan struct {
	Slots  []time.Time // oldest first
	Missed int64
	Next   time.Time // zero: the schedule never fires again
}

// maxCounted bounds how many slots before the catch-up window Plan walks
// one by one to count them missed (a cron firing every second, down for a
// day); past it the count stops. Interval schedules are counted exactly.
const maxCounted = 100_000

// Plan decides what s, due at now (NextFireAt ≤ now), fires, by API.md's
// rule: of the slots in [NextFireAt, now], those within onTime (one tick)
// of now are on time and fire; of the others, the missed, "none" fires
// nothing, "latest" the newest inside the catch-up window, "all" up to
// MaxCatchup of the newest inside it, oldest first. The rest count as
// missed. Every replica computes the same plan from the same row.
func (s *Schedule) Plan(now time.Time, onTime time.Duration) FirePlan {
	now = Trunc(now)
	onTimeAfter := now.Add(-onTime)
	windowStart := now.Add(-s.CatchupWindow)
	// Slots before both the window and the on-time ones are missed
	// whatever the policy.
	lost := onTimeAfter.Add(time.Millisecond)
	if windowStart.Before(lost) {
		lost = windowStart
	}
	keep := 0
	switch s.Catchup {
	case CatchupLatest:
		keep = 1
	case CatchupAll:
		keep = s.MaxCatchup
	}
	var p FirePlan
	var caught []time.Time // the newest keep missed slots inside the window
	slot := s.NextFireAt
	for counted := 0; !slot.IsZero() && !slot.After(now); counted++ {
		switch {
		case slot.After(onTimeAfter):
			p.Slots = append(p.Slots, slot)
		case slot.Before(lost):
			n, next := s.skipTo(slot, lost, counted)
			p.Missed += n
			slot = next
			continue
		case keep > 0:
			caught = append(caught, slot)
			if len(caught) > keep {
				caught = caught[1:]
				p.Missed++
			}
		default:
			p.Missed++
		}
		slot = s.Next(slot)
	}
	p.Slots = append(caught, p.Slots...)
	p.Next = slot
	return p
}

// skipTo counts the slots from slot (included) before end, and returns how
// many there are and the first slot not before end.
// Interval slots are counted by arithmetic; cron slots one by one, the
// count stopping at maxCounted.
func (s *Schedule) skipTo(slot, end time.Time, counted int) (int64, time.Time) {
	if s.Every > 0 {
		first := s.Next(end.Add(-time.Millisecond))
		return int64(first.Sub(slot) / s.Every), first
	}
	if counted >= maxCounted {
		return 0, s.Next(end.Add(-time.Millisecond))
	}
	return 1, s.Next(slot)
}

// Jobs are the job specs of the plan's slots, each run_at its slot plus
// the schedule's jitter for it.
func (s *Schedule) Jobs(p FirePlan) []JobSpec {
	specs := make([]JobSpec, len(p.Slots))
	for i, slot := range p.Slots {
		specs[i] = s.JobSpec(slot, slot.Add(ScheduleJitter(s.Name, slot, s.Jitter)))
	}
	return specs
}

// ScheduleJitter is the delay a schedule's job for slot waits past it: at
// most max, derived from (name, slot) alone, so every replica computes the
// same and a schedule's jobs still spread over the window.
func ScheduleJitter(name string, slot time.Time, max time.Duration) time.Duration {
	ms := max.Milliseconds()
	if ms <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(slot.UnixMilli())))
	return time.Duration(h.Sum64()%uint64(ms+1)) * time.Millisecond
}

// OverlapKeep is what overlap skip leaves of a fire's jobs: none while the
// last fire's job is unfinished (busy), else the first alone, since each
// job it inserts is then the unfinished one.
func OverlapKeep(jobs []JobSpec, busy bool) []JobSpec {
	if busy || len(jobs) == 0 {
		return nil
	}
	return jobs[:1]
}
