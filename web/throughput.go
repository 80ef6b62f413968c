package web

import (
	"time"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// The throughput chart: the last hour, one stacked bar a minute.
const (
	chartSpan = time.Hour
	chartStep = time.Minute
)

// throughputPanel is the chart's bars, already laid out, and its totals.
type throughputPanel struct {
	Bars                       []chartBar
	Axis                       axis
	Succeeded, Failed, Rescued int64
	Quiet                      bool // nothing closed in the hour
	ViewBox                    string
}

// chartBar is one minute: its stacked segments and its hover text.
func (d *dash) throughputPanel(rq *request) (templ.Component, error) {
	if d.ins == nil {
		return nil, errNoInsights
	}
	mins, err := d.ins.ThroughputList(rq.ctx, &store.ThroughputListParams{From: rq.now.Add(-chartSpan + chartStep), To: rq.now})
	if err != nil {
		return nil, err
	}
	return throughputView(layoutChart(mins)), nil
}

// layoutChart places the bars: the y axis runs to a round number above
// the busiest minute.
func layoutChart(mins []store.ThroughputMinute) throughputPanel {
	m := throughputPanel{ViewBox: "0 0 " + f1(plotW) + " " + f1(plotH)}
	var peak int64
	for _, x := range mins {
		m.Succeeded += x.Succeeded
		m.Failed += x.Failed
		m.Rescued += x.Rescued
		peak = max(peak, x.Succeeded+x.Failed+x.Rescued)
	}
	m.Quiet = peak == 0
	m.Axis = newAxis(peak)
	slot := plotW / float64(max(len(mins), 1))
	for i, x := range mins {
		title := x.Minute.Format("15:04") + " UTC: " + number(x.Succeeded) + " succeeded, " +
			number(x.Failed) + " failed, " + number(x.Rescued) + " rescued"
		m.Bars = append(m.Bars, stackedBar(m.Axis, i, slot, title,
			barPart{"succeeded", x.Succeeded}, barPart{"failed", x.Failed}, barPart{"rescued", x.Rescued}))
	}
	return m
}
