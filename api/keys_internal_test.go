package api

import (
	"strconv"
	"strings"
	"testing"
)

// splitHookKey reads a hookKey back into its parts; ok is false when key
// is not one.
func splitHookKey(key string) (hook, by, value string, ok bool) {
	rest, ok := strings.CutPrefix(key, "hook/")
	if !ok {
		return "", "", "", false
	}
	digits, rest, ok := strings.Cut(rest, ":")
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || n < 0 || n > len(rest) || strconv.Itoa(n) != digits {
		return "", "", "", false
	}
	hook, rest = rest[:n], rest[n:]
	rest, ok = strings.CutPrefix(rest, "/")
	if !ok {
		return "", "", "", false
	}
	by, value, ok = strings.Cut(rest, ":")
	return hook, by, value, ok
}

// The dedupe keys are a one-to-one encoding: every hook key reads back
// into the hook, kind and value it was made of, so two deliveries that
// differ in any of them have different keys; and no job key, nor any key
// of the layout before hook keys carried the name's length ("hook:"), is
// a hook key.
func FuzzHookKey(f *testing.F) {
	f.Add("a:b", "c", "b:c")
	f.Add("a", "b:c", "x")
	f.Add("3", "a:b/id:x", "hook/1:a/id:x")
	f.Add("1", "a/id:1:b/id:x", "")
	f.Fuzz(func(t *testing.T, hook, value, idemKey string) {
		for _, by := range []string{hookByID, hookByBody} {
			key := hookKey(hook, by, value)
			h, b, v, ok := splitHookKey(key)
			if !ok || h != hook || b != by || v != value {
				t.Fatalf("hookKey(%q, %q, %q) = %q reads back as %q, %q, %q", hook, by, value, key, h, b, v)
			}
			if strings.HasPrefix(key, "hook:") || strings.HasPrefix(key, "job:") {
				t.Fatalf("hook key %q shares a prefix with another layout", key)
			}
		}
		if _, _, _, ok := splitHookKey(jobKey(idemKey)); ok {
			t.Fatalf("jobKey(%q) reads as a hook key", idemKey)
		}
	})
}
