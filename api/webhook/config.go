package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/tetherq/tether/store"
)

// The hooks file, --hooks:
//
//	{"hooks": [{"name": "gh", "queue": "gh", "kind": "github.event",
//	  "scheme": "github", "secrets": ["…"], "tolerance_ms": 300000,
//	  "dedupe_ms": 259200000, "headers": ["X-Custom"]}]}
//
// Unknown fields are errors, so a misspelt "secret" never leaves a hook
// unsigned.
type file struct {
	Hooks []fileHook `json:"hooks"`
}

type fileHook struct {
	Name        string   `json:"name"`
	Queue       string   `json:"queue"`
	Kind        string   `json:"kind"`
	Scheme      Scheme   `json:"scheme"`
	Secrets     []string `json:"secrets"`
	ToleranceMS *int64   `json:"tolerance_ms"`
	DedupeMS    *int64   `json:"dedupe_ms"`
	Headers     []string `json:"headers"`
}

// Limits of the hooks file.
const (
	maxTolerance = 24 * time.Hour
	maxDedupe    = 365 * 24 * time.Hour
	defaultQueue = "default"
)

// headerRE is an HTTP header name (RFC 9110 token).
var headerRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")

// Load reads the hooks file at path; see Parse.
func Load(path string) ([]*Hook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hooks file: %w", err)
	}
	hooks, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("hooks file %s: %w", path, err)
	}
	return hooks, nil
}

// Parse reads a hooks file and checks every hook: names, a known scheme,
// at least one secret for a signed scheme and none for "none", decodable
// standard-webhooks secrets, windows in range, unique names. Errors name
// the hook but never quote a secret.
func Parse(data []byte) ([]*Hook, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("parse: trailing data after the JSON object")
	}
	hooks := make([]*Hook, 0, len(f.Hooks))
	seen := map[string]bool{}
	for i, fh := range f.Hooks {
		h, err := fh.hook()
		if err != nil {
			return nil, fmt.Errorf("hooks[%d] (%q): %w", i, fh.Name, err)
		}
		if seen[h.Name] {
			return nil, fmt.Errorf("hooks[%d]: the name %q is used twice", i, h.Name)
		}
		seen[h.Name] = true
		hooks = append(hooks, h)
	}
	return hooks, nil
}

// hook checks one entry and fills its defaults.
func (fh *fileHook) hook() (*Hook, error) {
	h := &Hook{Name: fh.Name, Queue: fh.Queue, Kind: fh.Kind, Scheme: fh.Scheme,
		Tolerance: DefaultTolerance, Dedupe: DefaultDedupe, Headers: fh.Headers}
	if h.Queue == "" {
		h.Queue = defaultQueue
	}
	for _, f := range []struct{ field, v string }{{"name", h.Name}, {"queue", h.Queue}, {"kind", h.Kind}} {
		if !store.ValidName(f.v) {
			return nil, fmt.Errorf("%s must be %s", f.field, store.NameRule)
		}
	}
	for _, name := range h.Headers {
		if !headerRE.MatchString(name) {
			return nil, fmt.Errorf("headers: %q is not a header name", name)
		}
	}
	var err error
	if h.Tolerance, err = window("tolerance_ms", fh.ToleranceMS, DefaultTolerance, maxTolerance); err != nil {
		return nil, err
	}
	if h.Dedupe, err = window("dedupe_ms", fh.DedupeMS, DefaultDedupe, maxDedupe); err != nil {
		return nil, err
	}
	// A captured delivery verifies again until its signed timestamp is
	// Tolerance old, and that timestamp may itself be Tolerance ahead of
	// our clock when it first arrives: its id must be remembered that long.
	if h.Scheme.timestamped() && h.Dedupe < 2*h.Tolerance {
		return nil, fmt.Errorf("dedupe_ms (%d) must be at least twice tolerance_ms (%d), or a replayed delivery outlives its dedupe record",
			h.Dedupe.Milliseconds(), h.Tolerance.Milliseconds())
	}
	h.Keys, err = keys(h.Scheme, fh.Secrets)
	return h, err
}

// window converts an optional millisecond field in 1s..hi.
func window(field string, ms *int64, def, hi time.Duration) (time.Duration, error) {
	if ms == nil {
		return def, nil
	}
	if *ms < 1000 || *ms > hi.Milliseconds() {
		return 0, fmt.Errorf("%s must be in 1000..%d", field, hi.Milliseconds())
	}
	return time.Duration(*ms) * time.Millisecond, nil
}

// keys turns the secrets of a scheme into HMAC keys.
func keys(scheme Scheme, secrets []string) ([][]byte, error) {
	switch scheme {
	case SchemeNone:
		if len(secrets) > 0 {
			return nil, errors.New(`scheme "none" verifies no signature: remove its secrets, or pick a signed scheme`)
		}
		return nil, nil
	case SchemeStandard, SchemeGitHub, SchemeStripe:
	default:
		return nil, fmt.Errorf("scheme must be one of standard-webhooks, github, stripe, none, not %q", scheme)
	}
	if len(secrets) == 0 {
		return nil, fmt.Errorf("scheme %q needs at least one secret", scheme)
	}
	out := make([][]byte, len(secrets))
	for i, s := range secrets {
		if s == "" {
			return nil, fmt.Errorf("secrets[%d] is empty", i)
		}
		out[i] = []byte(s)
		if scheme == SchemeStandard {
			key, err := DecodeStandardSecret(s)
			if err != nil {
				return nil, fmt.Errorf("secrets[%d]: %w", i, err)
			}
			out[i] = key
		}
	}
	return out, nil
}
