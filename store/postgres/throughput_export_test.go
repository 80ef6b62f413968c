package postgres

import "time"

// SumThroughputForTest is the statement a tick at now sums throughput
// minutes with, and its arguments.
func SumThroughputForTest(now time.Time) (string, []any) {
	return sumThroughputSQL, sumThroughputArgs(now)
}
