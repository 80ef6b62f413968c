package store

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A template's concurrency_key is stored and read back, and a template
// without one is stored as before it existed, so the spec hash of a
// schedule written then does not change.
func TestScheduleJobConcurrencyKeyStored(t *testing.T) {
	key := "tenant-1"
	b, err := json.Marshal(ScheduleJob{Kind: "k", ConcurrencyKey: &key})
	if err != nil {
		t.Fatal(err)
	}
	var back ScheduleJob
	if err := json.Unmarshal(b, &back); err != nil || back.ConcurrencyKey == nil || *back.ConcurrencyKey != key {
		t.Fatalf("%s read back as %+v, %v", b, back, err)
	}
	spec := ScheduleSpec{Name: "s", Job: back}
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	if got := spec.JobSpec(at, at).ConcurrencyKey; got == nil || *got != key {
		t.Errorf("the fired job's concurrency key = %v, want %q", got, key)
	}
	b, err = json.Marshal(ScheduleJob{Kind: "k"})
	if err != nil || strings.Contains(string(b), "concurrency_key") {
		t.Errorf("a template without a key stored as %s, %v", b, err)
	}
}
