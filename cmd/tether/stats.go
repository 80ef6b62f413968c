package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// percentile returns the nearest-rank p-quantile (0 < p ≤ 1) of ds, 0 for
// none. It sorts ds in place.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(math.Ceil(p * float64(len(ds))))
	return ds[min(max(rank, 1), len(ds))-1]
}

// ms formats d in milliseconds with one decimal: "3.1ms".
func msText(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}
