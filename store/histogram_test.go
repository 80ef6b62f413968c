package store

import (
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 0}, {0, 0}, {999 * time.Microsecond, 0},
		{time.Millisecond, 1}, {1189 * time.Microsecond, 1}, {1190 * time.Microsecond, 2},
		{2 * time.Millisecond, 5}, {time.Second, 40}, {time.Hour, 88},
		{100 * 24 * time.Hour, HistogramBuckets - 1},
	} {
		if got := histogramBucket(max(tt.d, 0)); got != tt.want {
			t.Errorf("bucket of %s = %d, want %d", tt.d, got, tt.want)
		}
	}
	// Each bucket's upper bound is the next one's lower bound.
	for b := 1; b < HistogramBuckets-1; b++ {
		if got := histogramBucket(histogramUpper(b) + time.Microsecond); got != b+1 {
			t.Fatalf("just above bucket %d's upper bound %s: bucket %d", b, histogramUpper(b), got)
		}
	}
}

// Percentiles read from merged histograms are within a bucket (19 %) of
// the true ones, never below them.
func TestHistogramQuantile(t *testing.T) {
	t.Parallel()
	a, b := Histogram{}, Histogram{}
	for i := 1; i <= 900; i++ {
		a.Add(time.Duration(i) * time.Millisecond) // 1 ms .. 900 ms
	}
	for i := 901; i <= 1000; i++ {
		b.Add(time.Duration(i) * time.Millisecond)
	}
	h := Histogram{}
	h.Merge(a)
	h.Merge(b)
	if h.Count() != 1000 {
		t.Fatalf("count %d", h.Count())
	}
	for _, tt := range []struct {
		q    float64
		true time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.95, 950 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, time.Second}} {
		got := h.Quantile(tt.q)
		if got < tt.true || float64(got) > 1.19*float64(tt.true)+float64(time.Millisecond) {
			t.Errorf("p%.0f = %s, want within 19 %% above %s", tt.q*100, got, tt.true)
		}
	}
	if (Histogram{}).Quantile(0.5) != 0 {
		t.Error("an empty histogram has a median")
	}
	if got := ParseHistogram(h.String()); got.String() != h.String() {
		t.Errorf("round trip: %q, want %q", got.String(), h.String())
	}
	if got := ParseHistogram("3:2,x:1,4:-1,999:5,5:1"); got.String() != "3:2,5:1" {
		t.Errorf("a damaged encoding reads %q", got.String())
	}
}
