package postgres

import "time"

// CandidateQueryForTest is a limited lease's read of queue's candidates:
// a first page, or with after a later one past a job of priority 0 at
// now, passing over the keys in excluded; and the probe for jobs left.
func CandidateQueryForTest(queue string, excluded []string, after bool, page int, now time.Time) (read string, readArgs []any, probe string, probeArgs []any) {
	var from *candidate
	if after {
		from = &candidate{id: "00000000-0000-0000-0000-000000000000", runAt: now}
	}
	read, readArgs = candidateQuery(queue, nil, excluded, from, page, true)
	probe, probeArgs = candidateQuery(queue, nil, excluded, from, 1, false)
	return read, readArgs, probe, probeArgs
}
