package sqlite

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// endKey is one row of the throughput table: a minute and an outcome.
type endKey struct {
	minute  int64 // Unix minutes
	outcome store.Outcome
}

// closed records that n attempts ended with outcome at Unix milliseconds
// at. Only the outcomes the throughput chart shows are kept.
func (t *txn) closed(outcome store.Outcome, at int64, n int64) {
	switch outcome {
	case store.OutcomeSucceeded, store.OutcomeFailed, store.OutcomeTimedOut, store.OutcomeOrphaned:
	default:
		return
	}
	if n == 0 {
		return
	}
	if t.ends == nil {
		t.ends = map[endKey]int64{}
	}
	t.ends[endKey{at / 60_000, outcome}] += n
}

// flushEnds writes the recorded throughput: one statement per minute and
// outcome however many attempts closed, as queue_counts does per state.
func (t *txn) flushEnds(ctx context.Context) error {
	for k, n := range t.ends {
		_, err := t.ExecContext(ctx, `INSERT INTO throughput (minute, outcome, n) VALUES (?, ?, ?)
			ON CONFLICT (minute, outcome) DO UPDATE SET n = n + excluded.n`, k.minute, k.outcome, n)
		if err != nil {
			return fmt.Errorf("count %s attempts: %w", k.outcome, err)
		}
	}
	return nil
}

// ThroughputRoll drops the minutes older than store.ThroughputRetention:
// SQLite adds each settled attempt to its minute on the write path, so
// there is nothing to roll up.
func (s *Store) ThroughputRoll(ctx context.Context, p *store.ThroughputRollParams) (int, error) {
	cutoff := p.Now.Add(-store.ThroughputRetention).UnixMilli() / 60_000
	return s.deleteSome(ctx, "prune throughput", `DELETE FROM throughput WHERE minute < ?`, cutoff)
}
