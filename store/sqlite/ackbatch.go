package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/tetherq/tether/store"
)

// ackSizes are the list lengths the batch ack statements are prepared for;
// a batch is padded to the next one by repeating its last pair, which IN
// ignores. A handful of shapes keeps them all in the statement cache.
var ackSizes = []int{1, 4, 16, 64, 256}

// ackMany settles the acks that carry no result with one set statement per
// chunk instead of one per job. It returns the acks it settled, by
// ackKey (an id settles under one token, so a stale token for an id that
// another ack of the batch settled is not among them); the rest
// (stale tokens, unknown ids, repeats) are left to the one-by-one path,
// which tells them apart.
//
// A success writes no history row: it is a job's last attempt, and the
// succeeded row keeps every fact of it (attempt_id, attempt, worker_id,
// started_at, finished_at), so the job page reads it from there
// (jobRow.closedAttempt). The throughput chart counts it as it counts
// every closed attempt, in the transaction (txn.closed).
func ackMany(ctx context.Context, tx *txn, acks []store.JobAckParams, now int64) (map[string]bool, error) {
	done := make(map[string]bool, len(acks))
	for len(acks) > 0 {
		size := ackSizes[len(ackSizes)-1]
		for _, s := range ackSizes {
			if s >= len(acks) {
				size = s
				break
			}
		}
		chunk := acks[:min(size, len(acks))]
		acks = acks[len(chunk):]
		pairs := "(" + strings.TrimSuffix(strings.Repeat("(?, ?), ", size), ", ") + ")"
		args := make([]any, 0, 2*size+1)
		args = append(args, now)
		for i := range size {
			a := chunk[min(i, len(chunk)-1)]
			args = append(args, a.ID, a.Token)
		}
		var rows []struct {
			ID    string `db:"id"`
			Token string `db:"token"`
			Queue string `db:"queue"`
		}
		err := tx.SelectContext(ctx, &rows, `UPDATE jobs SET state = 'succeeded', finished_at = ?,
			result = NULL, expires_at = NULL WHERE state = 'running' AND (id, token) IN (VALUES `+
			pairs[1:len(pairs)-1]+`) RETURNING id, token, queue`, args...)
		if err != nil {
			return nil, fmt.Errorf("ack: %w", err)
		}
		for _, r := range rows {
			done[ackKey(r.ID, r.Token)] = true
			tx.ended(r.Queue, store.StateSucceeded, 1)
		}
		tx.closed(store.OutcomeSucceeded, now, int64(len(rows)))
	}
	return done, nil
}

// ackKey names one ack in ackMany's answer.
func ackKey(id, token string) string { return id + "\x00" + token }
