package web

import (
	"fmt"
	"time"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// depthRange is one span the queue page charts its depth over: how many
// bars, each covering step.
type depthRange struct {
	Key, Label string
	span, step time.Duration
	ago        string // the left edge's label
	stampFmt   string // a bar's time in its hover text
}

var depthRanges = []depthRange{
	{"1h", "1 hour", time.Hour, time.Minute, "60 min ago", "15:04"},
	{"24h", "24 hours", 24 * time.Hour, 10 * time.Minute, "24 h ago", "Jan 2 15:04"},
	{"7d", "7 days", store.DepthRetention, time.Hour, "7 days ago", "Jan 2 15:04"},
}

// depthPanel is the queue's backlog over a range: one stacked bar per
// step, available under scheduled.
type depthPanel struct {
	Queue   string
	Range   depthRange
	Ranges  []depthRange
	Bars    []chartBar
	Axis    axis
	ViewBox string
	Sampled bool // a sample falls in the range
	Back    string
}

func rangeOf(rq *request) (depthRange, error) {
	key := rq.query("range")
	if key == "" {
		return depthRanges[0], nil
	}
	for _, r := range depthRanges {
		if r.Key == key {
			return r, nil
		}
	}
	return depthRange{}, &badInput{msg: fmt.Sprintf("range %q must be 1h, 24h or 7d", key)}
}

// queueHistory is what a queue page's history panel reads: the range the
// request asks for, the queue, and the end of the range's last bar (the
// bar holding now).
func (d *dash) queueHistory(rq *request) (depthRange, *store.Queue, time.Time, error) {
	r, err := rangeOf(rq)
	if err != nil {
		return depthRange{}, nil, time.Time{}, err
	}
	q, err := d.queueOf(rq)
	if err != nil {
		return depthRange{}, nil, time.Time{}, err
	}
	if d.ins == nil {
		return depthRange{}, nil, time.Time{}, errNoInsights
	}
	return r, q, rq.now.UTC().Truncate(r.step).Add(r.step), nil
}

func (d *dash) queueDepthPanel(rq *request) (templ.Component, error) {
	r, q, end, err := d.queueHistory(rq)
	if err != nil {
		return nil, err
	}
	samples, err := d.ins.QueueDepthList(rq.ctx, &store.QueueDepthListParams{Queue: q.Name, Since: end.Add(-r.span), Until: end,
		Step: r.step})
	if err != nil {
		return nil, err
	}
	m := layoutDepth(samples, r, end)
	m.Queue, m.Ranges, m.Back = q.Name, depthRanges, rq.back
	return queueDepthView(m), nil
}

// layoutDepth places one bar per step ending at end: each shows the
// step's deepest sample (a backlog's peak is what a person looks for); a
// step without a sample has no bar.
func layoutDepth(samples []store.QueueDepth, r depthRange, end time.Time) depthPanel {
	m := depthPanel{Range: r, ViewBox: "0 0 " + f1(plotW) + " " + f1(plotH)}
	n := int(r.span / r.step)
	start := end.Add(-r.span)
	peakOf := make([]*store.QueueDepth, n)
	var peak int64
	for i := range samples {
		s := &samples[i]
		k := int(s.Minute.Sub(start) / r.step)
		if k < 0 || k >= n {
			continue
		}
		if p := peakOf[k]; p == nil || s.Available+s.Scheduled > p.Available+p.Scheduled {
			peakOf[k] = s
		}
		peak = max(peak, s.Available+s.Scheduled)
		m.Sampled = true
	}
	m.Axis = newAxis(peak)
	slot := plotW / float64(n)
	for i, s := range peakOf {
		at := start.Add(time.Duration(i) * r.step)
		if s == nil {
			m.Bars = append(m.Bars, stackedBar(m.Axis, i, slot, at.Format(r.stampFmt)+" UTC: no sample"))
			continue
		}
		title := at.Format(r.stampFmt) + " UTC: " + number(s.Available) + " available, " + number(s.Scheduled) + " scheduled"
		m.Bars = append(m.Bars, stackedBar(m.Axis, i, slot, title,
			barPart{"available", s.Available}, barPart{"scheduled", s.Scheduled}))
	}
	return m
}
