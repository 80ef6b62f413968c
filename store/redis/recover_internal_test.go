package redis

import (
	"maps"
	"testing"
)

// TestHashFields: an HGETALL reply inside EXEC reads the same as field/value
// pairs (RESP2) and as a map (RESP3); anything else, as a missing hash, is
// no fields.
func TestHashFields(t *testing.T) {
	t.Parallel()
	want := map[string]string{"s": "available", "a": "1"}
	for _, c := range []struct {
		name  string
		reply any
		want  map[string]string
	}{
		{"resp2", []any{"s", "available", "a", "1"}, want},
		{"resp3", map[any]any{"s": "available", "a": "1"}, want},
		{"empty", []any{}, map[string]string{}},
		{"nil", nil, map[string]string{}},
	} {
		if got := hashFields(c.reply); !maps.Equal(got, c.want) {
			t.Errorf("%s: hashFields(%v) = %v, want %v", c.name, c.reply, got, c.want)
		}
	}
}
