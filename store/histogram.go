package store

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Histogram counts durations in fixed logarithmic buckets, so that
// per-minute histograms add up into any range and give its percentiles
// without keeping a sample: bucket 0 holds durations under a millisecond,
// bucket b ≥ 1 those from 2^((b-1)/4) ms up to 2^(b/4) ms, a width of 19 %
// (the error of a percentile read from it). The last bucket holds
// everything from about 24 days on. Keys are buckets, values counts.
type Histogram map[int]int64

// HistogramBuckets is how many buckets a Histogram has.
const HistogramBuckets = 128

// histogramBucket is the bucket of d.
func histogramBucket(d time.Duration) int {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 1 {
		return 0
	}
	return min(1+int(math.Floor(4*math.Log2(ms))), HistogramBuckets-1)
}

// histogramUpper is the upper bound of bucket b.
func histogramUpper(b int) time.Duration {
	if b == 0 {
		return time.Millisecond
	}
	return time.Duration(math.Pow(2, float64(b)/4) * float64(time.Millisecond))
}

// Add counts d (a negative duration counts as 0).
func (h Histogram) Add(d time.Duration) { h[histogramBucket(max(d, 0))]++ }

// Merge adds o's counts to h.
func (h Histogram) Merge(o Histogram) {
	for b, n := range o {
		h[b] += n
	}
}

// Count is how many durations h holds.
func (h Histogram) Count() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// Quantile returns the upper bound of the bucket holding the q-quantile
// (0 < q ≤ 1), or 0 for an empty histogram.
func (h Histogram) Quantile(q float64) time.Duration {
	total := h.Count()
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for _, b := range slices.Sorted(maps.Keys(h)) {
		seen += h[b]
		if seen >= rank {
			return histogramUpper(b)
		}
	}
	return histogramUpper(HistogramBuckets - 1)
}

// String encodes h as "bucket:count" pairs by bucket, comma-separated:
// how the backends store it.
func (h Histogram) String() string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(h)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(k))
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(h[k], 10))
	}
	return b.String()
}

// ParseHistogram decodes what String wrote; it skips what it cannot read.
func ParseHistogram(s string) Histogram {
	h := Histogram{}
	for _, p := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(p, ":")
		b, err1 := strconv.Atoi(k)
		n, err2 := strconv.ParseInt(v, 10, 64)
		if ok && err1 == nil && err2 == nil && b >= 0 && b < HistogramBuckets && n > 0 {
			h[b] += n
		}
	}
	return h
}
