package store

import (
	"testing"
	"time"
)

func TestWholeHours(t *testing.T) {
	t.Parallel()
	h := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return h.Add(time.Duration(m) * time.Minute) }
	for _, tt := range []struct {
		from, until int // minutes after h
		step        int64
		h0, h1      int
	}{
		{0, 180, 60, 0, 180},      // whole hours only
		{17, 125, 60, 60, 120},    // ends inside hours
		{5, 50, 60, 50, 50},       // inside one hour: minutes only
		{5, 60, 60, 60, 60},       // ends on an hour: no whole hour
		{0, 60, 60, 0, 60},        // exactly one hour
		{0, 10080, 120, 0, 10080}, // a step of two hours
		{17, 125, 15, 125, 125},   // a step shorter than an hour: minutes only
		{17, 125, 90, 125, 125},   // not a whole number of hours: minutes only
		{-30, 30, 60, 0, 0},       // across an hour's start, no whole hour
		{60, 60, 60, 60, 60},      // empty
	} {
		h0, h1 := WholeHours(at(tt.from), at(tt.until), tt.step)
		if !h0.Equal(at(tt.h0)) || !h1.Equal(at(tt.h1)) {
			t.Errorf("WholeHours(%d, %d, step %d) = %s, %s; want minutes %d, %d", tt.from, tt.until, tt.step,
				h0.Format("15:04"), h1.Format("15:04"), tt.h0, tt.h1)
		}
	}
}
