package main

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond // unsorted on purpose
	}
	tests := []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{[]time.Duration{7}, 0.99, 7},
		{[]time.Duration{3, 1, 2}, 0.5, 2},
		{hundred, 0.50, 50 * time.Millisecond},
		{hundred, 0.99, 99 * time.Millisecond},
		{hundred, 1, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.ds, tt.p); got != tt.want {
			t.Errorf("percentile(%d items, %v) = %v, want %v", len(tt.ds), tt.p, got, tt.want)
		}
	}
}

func TestMs(t *testing.T) {
	t.Parallel()
	if got := msText(3140 * time.Microsecond); got != "3.1ms" {
		t.Errorf("ms = %q", got)
	}
}

func TestPayload(t *testing.T) {
	t.Parallel()
	if got := payload(42, 100); len(got) != 100 || !json.Valid(got) {
		t.Errorf("payload(42, 100) = %d bytes %s", len(got), got)
	}
	if got := string(payload(7, 1)); got != `{"n":7,"pad":""}` {
		t.Errorf("payload(7, 1) = %s", got)
	}
}
