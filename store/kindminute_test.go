package store

import (
	"fmt"
	"testing"
	"time"
)

// RollMinute counts by queue and kind, times only jobs that were leased,
// and keeps each queue's busiest MaxRolledKinds kinds.
func TestRollMinute(t *testing.T) {
	t.Parallel()
	m := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	started := m.Add(2 * time.Second)
	var jobs []FinishedJob
	for i := range MaxRolledKinds + 1 {
		jobs = append(jobs, FinishedJob{Queue: "a", Kind: fmt.Sprintf("k%02d", i), State: StateSucceeded, RunAt: m,
			StartedAt: &started, FinishedAt: m.Add(5 * time.Second)})
	}
	jobs = append(jobs,
		FinishedJob{Queue: "a", Kind: "k50", State: StateDead, RunAt: m, FinishedAt: m}, // never leased: counted, not timed
		FinishedJob{Queue: "b", Kind: "k00", State: StateSucceeded, RunAt: m, StartedAt: &started, FinishedAt: started})
	got := RollMinute(m, jobs)
	if len(got) != MaxRolledKinds+1 {
		t.Fatalf("%d rows, want %d for a and one for b", len(got), MaxRolledKinds+1)
	}
	byKey := map[string]KindMinute{}
	for _, r := range got {
		byKey[r.Queue+"/"+r.Kind] = r
	}
	if r := byKey["a/k50"]; r.Succeeded != 1 || r.Dead != 1 || r.Wait.Count() != 1 || r.Run.Count() != 1 {
		t.Errorf("a/k50 (the busiest) = %+v", r)
	}
	if _, ok := byKey["a/k49"]; ok {
		t.Error("a kept more than MaxRolledKinds kinds: k49, the last of the least busy, is there")
	}
	if r := byKey["b/k00"]; r.Succeeded != 1 || r.Minute != m || r.Wait.Quantile(1) < 2*time.Second || r.Run.Quantile(1) != time.Millisecond {
		t.Errorf("b/k00 = %+v", r)
	}
}
