package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// PipeTxForTest runs fn as pipeTx runs a transaction's batches.
func (s *Store) PipeTxForTest(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	return s.pipeTx(ctx, fn)
}

// ErrLeftOpen is what pipeTx returns when fn did not commit.
var ErrLeftOpen = errLeftOpen

// CandidateQueryForTest is a limited lease's read of queue's candidates:
// a first page, or with after a later one past a job of priority 0 at
// now, passing over the keys in excluded; and the probe for jobs left.
func CandidateQueryForTest(queue string, excluded []string, after bool, page int, now time.Time) (read string, readArgs []any, probe string, probeArgs []any) {
	var from *candidate
	if after {
		from = &candidate{runAt: now}
	}
	read, readArgs = candidateQuery(queue, nil, excluded, from, page, true)
	probe, probeArgs = candidateQuery(queue, nil, excluded, from, 1, false)
	return read, readArgs, probe, probeArgs
}
