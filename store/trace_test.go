package store

import (
	"strings"
	"testing"
)

func TestTraceCheck(t *testing.T) {
	const ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tt := range []struct {
		parent, state string
		valid         bool
	}{
		{ok, "", true},
		{ok, "congo=t61rcWkgMzE", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "", true},
		{ok, strings.Repeat("x", 512), true},
		{ok, strings.Repeat("x", 513), false},
		{"", "", false},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", false}, // version 00 only
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "", false}, // uppercase
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", false}, // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "", false}, // zero span id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", "", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", "", false},
		{"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", "", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz", "", false},
	} {
		err := (&Trace{Parent: tt.parent, State: tt.state}).Check()
		if (err == nil) != tt.valid {
			t.Errorf("Check(%q, %d chars of state) = %v, want valid %v", tt.parent, len(tt.state), err, tt.valid)
		}
	}
}
