package store

import "time"

// Queue depth history: the scheduler samples each queue's backlog once a
// minute (QueueDepthRoll) and the dashboard charts it (QueueDepthList).
// The history is bounded: at most MaxDepthQueues queues a minute, kept for
// DepthRetention.
const (
	// DepthRetention is how long the per-minute depth of a queue is kept:
	// the longest range the queue page charts.
	DepthRetention = 7 * 24 * time.Hour
	// MaxDepthMinutes bounds one QueueDepthList call: DepthRetention.
	MaxDepthMinutes = int(DepthRetention / time.Minute)
	// MaxDepthQueues bounds the queues sampled in one minute; the
	// scheduler keeps the deepest.
	MaxDepthQueues = 200
	// DepthPruneBatch bounds the expired minutes one QueueDepthRoll drops.
	DepthPruneBatch = 10_000
)

// QueueDepth is a queue's backlog at the start of one minute.
type QueueDepth struct {
	Queue     string
	Minute    time.Time // the start of the minute, UTC
	Available int64
	Scheduled int64 // retrying jobs included
}

type QueueDepthListParams struct {
	Queue string
	// Since and Until bound the minutes listed: from Since's minute up to
	// Until (exclusive); at most MaxDepthMinutes before Until.
	Since, Until time.Time
	// Step, when longer than a minute (a whole number of minutes), lists
	// one sample per step (steps aligned to the Unix epoch): the one with
	// the most jobs waiting, any of them on a tie. A chart of a week reads
	// its 168 hours, not 10,080 minutes.
	Step time.Duration
}

// DepthStepMinutes is p's step in whole minutes, 1 when it lists every
// sample.
func (p *QueueDepthListParams) DepthStepMinutes() int64 {
	return max(int64(p.Step/time.Minute), 1)
}

type QueueDepthRollParams struct {
	// Depths are the samples of the minute holding Now, their Minute
	// ignored; at most MaxDepthQueues of them are kept.
	Depths []QueueDepth
	Now    time.Time
}

// WholeHours splits [from, until) for a list by steps of stepMinutes: the
// hours in [h0, h1) lie whole inside it, and a backend that keeps each
// hour summed apart may read them so (a week is 168 rows, not 10,080);
// the minutes in [from, h0) and [h1, until) are read one by one. A step
// that is not a whole number of hours reads minutes only (h0 = h1 =
// until): an hour's sum can stand for its minutes only where they all
// fall in one step. Hours are aligned to the Unix epoch, as steps are.
func WholeHours(from, until time.Time, stepMinutes int64) (h0, h1 time.Time) {
	if stepMinutes%60 != 0 {
		return until, until
	}
	h0 = from.Truncate(time.Hour)
	if h0.Before(from) {
		h0 = h0.Add(time.Hour)
	}
	if h0.After(until) {
		h0 = until
	}
	h1 = until.Truncate(time.Hour)
	if h1.Before(h0) {
		h1 = h0
	}
	return h0, h1
}
