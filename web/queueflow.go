package web

import (
	"maps"
	"slices"
	"time"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// flowPanel is what a queue finished over a range: throughput per step
// (succeeded and dead stacked) and, per kind, how long jobs waited for a
// lease and ran, as percentiles.
type flowPanel struct {
	Queue     string
	Range     depthRange
	Bars      []chartBar
	Axis      axis
	ViewBox   string
	Succeeded int64
	Dead      int64
	Kinds     []kindRow
}

// kindRow is one kind's figures over the range.
type kindRow struct {
	Kind                string
	Succeeded, Dead     int64
	Timed               int64 // the jobs with times (leased at least once)
	Wait50, Wait95      string
	Wait99              string
	Run50, Run95, Run99 string
}

func (d *dash) queueFlowPanel(rq *request) (templ.Component, error) {
	r, q, end, err := d.queueHistory(rq)
	if err != nil {
		return nil, err
	}
	mins, err := d.ins.QueueMinuteList(rq.ctx, &store.QueueMinuteListParams{Queue: q.Name, Since: end.Add(-r.span), Until: end,
		Step: r.step})
	if err != nil {
		return nil, err
	}
	m := layoutFlow(mins, r, end)
	m.Queue = q.Name
	return queueFlowView(m), nil
}

// layoutFlow sums the minutes into one bar per step ending at end, and
// merges each kind's histograms over the whole range.
func layoutFlow(mins []store.KindMinute, r depthRange, end time.Time) flowPanel {
	m := flowPanel{Range: r, ViewBox: "0 0 " + f1(plotW) + " " + f1(plotH)}
	n := int(r.span / r.step)
	start := end.Add(-r.span)
	succ, dead := make([]int64, n), make([]int64, n)
	type kindSum struct {
		succ, dead int64
		wait, run  store.Histogram
	}
	kinds := map[string]*kindSum{}
	for _, x := range mins {
		i := int(x.Minute.Sub(start) / r.step)
		if i < 0 || i >= n {
			continue
		}
		succ[i] += x.Succeeded
		dead[i] += x.Dead
		k := kinds[x.Kind]
		if k == nil {
			k = &kindSum{wait: store.Histogram{}, run: store.Histogram{}}
			kinds[x.Kind] = k
		}
		k.succ += x.Succeeded
		k.dead += x.Dead
		k.wait.Merge(x.Wait)
		k.run.Merge(x.Run)
	}
	var peak int64
	for i := range n {
		m.Succeeded += succ[i]
		m.Dead += dead[i]
		peak = max(peak, succ[i]+dead[i])
	}
	m.Axis = newAxis(peak)
	slot := plotW / float64(n)
	for i := range n {
		title := start.Add(time.Duration(i)*r.step).Format(r.stampFmt) + " UTC: " + number(succ[i]) +
			" succeeded, " + number(dead[i]) + " dead"
		m.Bars = append(m.Bars, stackedBar(m.Axis, i, slot, title, barPart{"succeeded", succ[i]}, barPart{"failed", dead[i]}))
	}
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		k := kinds[name]
		row := kindRow{Kind: name, Succeeded: k.succ, Dead: k.dead, Timed: k.wait.Count()}
		row.Wait50, row.Wait95, row.Wait99 = pct(k.wait, 0.5), pct(k.wait, 0.95), pct(k.wait, 0.99)
		row.Run50, row.Run95, row.Run99 = pct(k.run, 0.5), pct(k.run, 0.95), pct(k.run, 0.99)
		m.Kinds = append(m.Kinds, row)
	}
	return m
}

// pct is a percentile as the page shows it: "≤ " the bound of the bucket
// holding it (the histograms keep no finer), or "—" with no job timed.
func pct(h store.Histogram, q float64) string {
	if h.Count() == 0 {
		return "—"
	}
	return "≤ " + span(h.Quantile(q))
}
