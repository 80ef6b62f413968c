package web

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestNewAxis(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		peak   int64
		labels string // the ticks, from 0 up
	}{
		{0, "0 1"},
		{1, "0 1"},
		{2, "0 1 2"},
		{4, "0 1 2 3 4"},
		{5, "0 2 4 6"}, // read 0 2 5 before: 2 at half of 5
		{7, "0 2 4 6 8"},
		{38, "0 10 20 30 40"},
		{100, "0 50 100"},
		{101, "0 50 100 150"},
		{4999, "0 2,000 4,000 6,000"},
	} {
		a := newAxis(tt.peak)
		var labels []string
		for _, tk := range a.Ticks {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != tt.labels {
			t.Errorf("newAxis(%d) ticks %q, want %q", tt.peak, got, tt.labels)
		}
	}
}

// Every label sits at the height of the value it reads, the top holds the
// peak, and the steps are even and round, whatever the peak.
func TestAxisLabelsReadTheirHeight(t *testing.T) {
	t.Parallel()
	for peak := int64(0); peak <= 2000; peak++ {
		a := newAxis(peak)
		if a.Top < max(peak, 1) || len(a.Ticks) < 2 || len(a.Ticks) > maxTicks+1 {
			t.Fatalf("peak %d: top %d with %d ticks", peak, a.Top, len(a.Ticks))
		}
		step := a.Top / int64(len(a.Ticks)-1)
		if !slices.Contains([]int64{1, 2, 5}, step/pow10(step)) {
			t.Fatalf("peak %d: step %d is not 1, 2 or 5 times a power of ten", peak, step)
		}
		for i, tk := range a.Ticks {
			v := int64(i) * step
			pos, err := strconv.ParseFloat(strings.TrimSuffix(tk.Pos, "%"), 64)
			if err != nil || tk.Label != number(v) || fmt.Sprintf("%.2f", pos) != fmt.Sprintf("%.2f", 100-100*float64(v)/float64(a.Top)) {
				t.Fatalf("peak %d: tick %d reads %q at %s, want %d at %.2f%%", peak, i, tk.Label, tk.Pos, v, 100-100*float64(v)/float64(a.Top))
			}
		}
	}
}

func pow10(n int64) int64 {
	p := int64(1)
	for p*10 <= n {
		p *= 10
	}
	return p
}
