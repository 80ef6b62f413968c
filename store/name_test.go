package store

import (
	"regexp"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
	}{
		{"default", true},
		{"A-Z.a_z:0-9", true},
		{strings.Repeat("q", 128), true},
		{"", false},
		{strings.Repeat("q", 129), false},
		{"a}:u:k:{", false}, // would reach another queue's Redis keys
		{"a b", false},
		{"a/b", false},
		{"é", false}, // one character, two bytes: not in the set
		{"a\x00", false},
		{"queue\n", false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.ok {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

// FuzzValidName holds ValidName to API.md's rule written as a regular
// expression.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"default", "a}:u:k:{", "", "é", strings.Repeat("q", 129)} {
		f.Add(s)
	}
	rule := regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), rule.MatchString(s); got != want {
			t.Fatalf("ValidName(%q) = %v, want %v", s, got, want)
		}
	})
}
