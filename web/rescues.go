package web

import (
	"slices"
	"time"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// rescuesPanel lists recent rescues: which dead worker held the job, when
// it was last heard from, how long the job waited, who rescued it.
type rescuesPanel struct {
	Rescues []rescueRow
	// Median is the median recovery time of the listed rescues.
	Median string
}

type rescueRow struct {
	JobID, Queue, Kind, State string
	Attempt                   int
	WorkerID                  string
	LastSeen                  instant
	RescuedAt                 instant
	Took                      string
	RecoveredBy               string
}

// Rescues shown: the last day's, at most maxRescues.
const (
	rescueWindow = 24 * time.Hour
	maxRescues   = 100
)

func (d *dash) rescuesPanel(rq *request) (templ.Component, error) {
	if d.ins == nil {
		return nil, errNoInsights
	}
	list, err := d.ins.RescueList(rq.ctx, &store.RescueListParams{Since: rq.now.Add(-rescueWindow), Limit: maxRescues})
	if err != nil {
		return nil, err
	}
	m := rescuesPanel{}
	var took []time.Duration
	for _, r := range list {
		row := rescueRow{JobID: r.JobID, Queue: r.Queue, Kind: r.Kind, State: string(r.State), Attempt: r.Attempt,
			WorkerID: r.WorkerID, LastSeen: instantAt(r.LastHeartbeatAt, rq.now), RescuedAt: instantAt(r.RescuedAt, rq.now),
			Took: "—", RecoveredBy: r.RecoveredBy}
		if !r.LastHeartbeatAt.IsZero() {
			row.Took = span(r.RecoveryLatency())
			took = append(took, r.RecoveryLatency())
		}
		m.Rescues = append(m.Rescues, row)
	}
	if len(took) > 0 {
		m.Median = span(median(took))
	}
	return rescuesView(m), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
