package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	type inner struct {
		N *int `json:"n"`
	}
	type body struct {
		S     *string  `json:"s"`
		I     *int     `json:"i"`
		List  []string `json:"list"`
		Inner *inner   `json:"inner"`
	}
	tests := []struct {
		in     string // the JSON
		prefix string // the field prefix
		field  string // the field the error names; "-" for no error
	}{
		{``, "", "-"},
		{` {} `, "", "-"},
		{`{"s":"x","i":1,"list":["a"],"inner":{"n":2}}`, "", "-"},
		{`{"s":1}`, "", "s"},
		{`{"i":"1"}`, "", "i"},
		{`{"i":1e400}`, "", "i"},
		{`{"list":[1]}`, "", "list"},
		{`{"inner":{"n":"x"}}`, "", "inner.n"},
		{`{"inner":{"x":1}}`, "", "x"},
		{`{"x":1}`, "jobs[2].", "jobs[2].x"},
		{`{"i":true}`, "jobs[2].", "jobs[2].i"},
		{`{}{}`, "", ""},
		{`{} x`, "jobs[0].", "jobs[0]"},
		{`{"s":`, "", ""},
		{`{"s" "x"}`, "", ""},
		{`[]`, "acks[1].", "acks[1]"},
		{`"s"`, "", ""},
	}
	for _, tt := range tests {
		var v body
		err := decodeStrict([]byte(tt.in), &v, tt.prefix)
		var fe *fieldError
		switch {
		case tt.field == "-" && err != nil:
			t.Errorf("%s: %v", tt.in, err)
		case tt.field == "-":
		case !errors.As(err, &fe):
			t.Errorf("%s: error %v, want a fieldError", tt.in, err)
		case fe.field != tt.field:
			t.Errorf("%s: field %q, want %q (%v)", tt.in, fe.field, tt.field, err)
		}
	}
}

func TestRequestHashIsCanonical(t *testing.T) {
	t.Parallel()
	base := requestHash([]byte(`{"kind":"k","payload":{"a":1,"b":[1,2]}}`))
	for _, same := range []string{
		`{"payload":{"b":[1,2],"a":1},"kind":"k"}`,
		"{\n  \"kind\" : \"k\",\n  \"payload\" : { \"a\" : 1 , \"b\" : [ 1 , 2 ] }\n}\n",
	} {
		if requestHash([]byte(same)) != base {
			t.Errorf("%s hashes apart", same)
		}
	}
	for _, other := range []string{
		`{"kind":"k","payload":{"a":1,"b":[2,1]}}`,
		`{"kind":"k","payload":{"a":1.0,"b":[1,2]}}`,
		`{"kind":"k","payload":{"a":"1","b":[1,2]}}`,
	} {
		if requestHash([]byte(other)) == base {
			t.Errorf("%s hashes equal", other)
		}
	}
}

func TestProblemOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err      error  // what the handler failed with
		status   int    // the answer's status
		code     string // the answer's code
		internal bool   // logged, detail hidden
	}{
		{invalid("priority", "must be small"), 400, codeInvalidRequest, false},
		{&http.MaxBytesError{Limit: 1}, 413, codePayloadTooLarge, false},
		{wrap(store.ErrNotFound), 404, codeNotFound, false},
		{wrap(store.ErrLeaseLost), 409, codeLeaseLost, false},
		{wrap(store.ErrInvalidState), 409, codeInvalidState, false},
		{wrap(store.ErrConflict), 422, codeIdempotency, false},
		{errors.New("disk on fire"), 500, codeInternal, true},
	}
	for _, tt := range tests {
		p, internal := problemOf(tt.err)
		if p.Status != tt.status || p.Code != tt.code || internal != tt.internal ||
			p.Type != "urn:tether:error:"+tt.code || p.Title == "" {
			t.Errorf("%v: %+v internal=%v", tt.err, p, internal)
		}
		if internal && strings.Contains(p.Detail, "fire") {
			t.Errorf("internal detail leaked: %q", p.Detail)
		}
	}
}

func FuzzDecodeSpec(f *testing.F) {
	for _, s := range []string{
		`{"kind":"k"}`, `{"kind":"k","backoff":{"base_ms":1,"max_ms":2}}`, `{"kind":"k","tags":["a"]}`,
		`{"kind":"k","run_at":"2030-01-01T00:00:00Z"}`, `{"kind":"k","metadata":{"a":[1]}}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := decodeSpec(data, "jobs[0].", testNow, nil)
		var fe *fieldError
		if err != nil {
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is no fieldError", err)
			}
			return
		}
		if !store.ValidName(spec.Kind) || !store.ValidName(spec.Queue) ||
			spec.Priority < -maxPriority || spec.Priority > maxPriority ||
			spec.MaxAttempts < 1 || spec.MaxAttempts > maxMaxAttempts ||
			spec.Timeout <= 0 || spec.Timeout > millis(maxTimeoutMS) ||
			spec.Backoff.Base <= 0 || spec.Backoff.Max < spec.Backoff.Base || spec.RunAt.IsZero() ||
			len(spec.Tags) > maxTags {
			t.Fatalf("accepted spec out of range: %+v", spec)
		}
	})
}

var testNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// wrap adds context as the store does.
func wrap(err error) error { return fmt.Errorf("job 42: %w", err) }
