package web

import "strconv"

// Charts draw only their marks in SVG, in a plot of their own units
// stretched to its box; labels are HTML around the plot, so they stay
// readable at any width.
const (
	// plotW and plotH are a chart's SVG units.
	plotW, plotH = 600.0, 100.0
	// maxTicks bounds the steps of a y axis above zero.
	maxTicks = 4
)

// axis is a chart's y axis: its top, and a tick at every step from 0 up to
// it, each at a round value, so that a label always reads the value at its
// height.
type axis struct {
	Top   int64
	Ticks []axisTick // from 0 up
}

// axisTick is one labelled value: Y in plot units (for its grid line), Pos
// as a CSS top (for its label).
type axisTick struct {
	Label string
	Y     string
	Pos   string
}

// newAxis fits an axis to the largest value drawn: a step of 1, 2 or 5
// times a power of ten, at most maxTicks of them, the top the first step at
// or above peak.
func newAxis(peak int64) axis {
	peak = max(peak, 1)
	step := niceCeil((peak + maxTicks - 1) / maxTicks)
	a := axis{Top: (peak + step - 1) / step * step}
	for v := int64(0); v <= a.Top; v += step {
		a.Ticks = append(a.Ticks, axisTick{Label: number(v), Y: f1(a.y(v)),
			Pos: strconv.FormatFloat(100*(1-float64(v)/float64(a.Top)), 'f', 2, 64) + "%"})
	}
	return a
}

// y is the plot height of v, 0 at the top.
func (a axis) y(v int64) float64 { return plotH * (1 - float64(v)/float64(a.Top)) }

// h is the plot height v takes from the bottom.
func (a axis) h(v int64) float64 { return plotH * float64(v) / float64(a.Top) }

// niceCeil rounds n up to 1, 2 or 5 times a power of ten.
func niceCeil(n int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, k := range []int64{1, 2, 5} {
			if k*p >= n {
				return k * p
			}
		}
	}
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// chartBar is one stacked bar: its hover title and its segments, bottom up.
type chartBar struct {
	Title string
	Segs  []chartSeg
}

type chartSeg struct {
	Class      string
	X, Y, W, H string
}

// barPart is one class's count in a stacked bar.
type barPart struct {
	class string
	n     int64
}

// stackedBar draws bar i of n-wide slots on axis a: its non-zero parts
// stacked from the bottom (each at least a hairline tall), or, when all are
// zero, an empty full-height target so the slot still has a hover title.
func stackedBar(a axis, i int, slot float64, title string, parts ...barPart) chartBar {
	left, width := f1(float64(i)*slot+slot*0.1), f1(slot*0.8)
	bar := chartBar{Title: title}
	y := plotH
	for _, p := range parts {
		if p.n == 0 {
			continue
		}
		h := max(a.h(p.n), 0.8)
		y -= h
		bar.Segs = append(bar.Segs, chartSeg{Class: "bar-" + p.class, X: left, Y: f1(y), W: width, H: f1(h)})
	}
	if len(bar.Segs) == 0 {
		bar.Segs = []chartSeg{{Class: "bar-none", X: left, Y: "0", W: width, H: f1(plotH)}}
	}
	return bar
}
