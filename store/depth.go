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
