package store

import (
	"cmp"
	"slices"
	"time"
)

// What finished in each minute, per queue and kind, for the queue page's
// throughput and percentiles: rolled up once a minute by the scheduler
// (QueueMinuteRoll) from the jobs that finished in it, kept as long as the
// depth (DepthRetention), read by QueueMinuteList.
const (
	// MaxRolledJobs bounds the finished jobs one QueueMinuteRoll reads:
	// beyond, the minute's figures cover the first read.
	MaxRolledJobs = 50_000
	// MaxRolledKinds bounds the kinds kept per queue and minute: the
	// busiest.
	MaxRolledKinds = 50
	// MinuteSettle is how long after a minute ends it can be rolled: the
	// time a commit may take to land after the instant it recorded.
	MinuteSettle = 5 * time.Second
)

// KindMinute is what one kind of one queue finished in one minute: how many
// jobs succeeded and died, and for those that have the times, how long
// their last delivery waited (from due: enqueued, scheduled or retried, to
// its lease) and ran (from lease to end).
type KindMinute struct {
	Queue, Kind     string
	Minute          time.Time // the start of the minute, UTC
	Succeeded, Dead int64
	Wait, Run       Histogram
}

// FinishedJob is what QueueMinuteRoll reads of a job that finished.
type FinishedJob struct {
	Queue, Kind string
	State       State
	RunAt       time.Time  // its last delivery's due time
	StartedAt   *time.Time // its last lease, if it has one
	FinishedAt  time.Time
}

// RollMinute folds the jobs that finished in one minute into one
// KindMinute per queue and kind, keeping each queue's MaxRolledKinds
// busiest kinds. It is the one rule every backend's QueueMinuteRoll
// applies.
func RollMinute(minute time.Time, jobs []FinishedJob) []KindMinute {
	type key struct{ q, k string }
	by := map[key]*KindMinute{}
	var order []key
	for _, j := range jobs {
		k := key{j.Queue, j.Kind}
		m := by[k]
		if m == nil {
			m = &KindMinute{Queue: j.Queue, Kind: j.Kind, Minute: minute, Wait: Histogram{}, Run: Histogram{}}
			by[k] = m
			order = append(order, k)
		}
		if j.State == StateDead {
			m.Dead++
		} else {
			m.Succeeded++
		}
		if j.StartedAt != nil {
			m.Wait.Add(j.StartedAt.Sub(j.RunAt))
			m.Run.Add(j.FinishedAt.Sub(*j.StartedAt))
		}
	}
	out := make([]KindMinute, 0, len(order))
	for _, k := range order {
		out = append(out, *by[k])
	}
	return capKinds(out)
}

// capKinds keeps each queue's MaxRolledKinds busiest kinds.
func capKinds(ms []KindMinute) []KindMinute {
	perQueue := map[string]int{}
	for _, m := range ms {
		perQueue[m.Queue]++
	}
	over := false
	for _, n := range perQueue {
		over = over || n > MaxRolledKinds
	}
	if !over {
		return ms
	}
	slicesSortKinds(ms)
	kept := map[string]int{}
	out := ms[:0]
	for _, m := range ms {
		if kept[m.Queue] < MaxRolledKinds {
			kept[m.Queue]++
			out = append(out, m)
		}
	}
	return out
}

type QueueMinuteRollParams struct {
	// Minute is the minute to roll (truncated to the minute); it must have
	// ended MinuteSettle before Now.
	Minute time.Time
	Now    time.Time
}

type QueueMinuteListParams struct {
	Queue string
	// Since and Until bound the minutes listed, as for QueueDepthList.
	Since, Until time.Time
	// Step, when longer than a minute (a whole number of minutes), sums
	// each kind's minutes per step (steps aligned to the Unix epoch, Minute
	// the step's start), histograms merged: a week's chart reads 168 rows
	// per kind, not 10,080.
	Step time.Duration
}

// StepMinutes is p's step in whole minutes, 1 when it lists every minute.
func (p *QueueMinuteListParams) StepMinutes() int64 { return max(int64(p.Step/time.Minute), 1) }

// slicesSortKinds orders by queue, then the most jobs first, then kind.
func slicesSortKinds(ms []KindMinute) {
	slices.SortFunc(ms, func(a, b KindMinute) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(b.Succeeded+b.Dead, a.Succeeded+a.Dead), cmp.Compare(a.Kind, b.Kind))
	})
}
