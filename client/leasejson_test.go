package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// leaseJob is one job as a server's lease answer holds it.
const leaseJob = `{"id":"019ae04c-5c1e-7a42-9d0b-3f2f5e4b7a10","queue":"default","kind":"bench",` +
	`"payload":{"to":"user@example.com","n":[1,2.5e3,-0,true,null,"a\"b\u00e9"]},"priority":-3,"state":"running",` +
	`"attempt":1,"max_attempts":20,"timeout_ms":1800000,"backoff":{"base_ms":1000,"max_ms":3600000},` +
	`"run_at":"2026-12-03T17:04:49.123Z","created_at":"2026-12-03T17:04:49.000Z","started_at":"2026-12-03T17:04:50.456Z",` +
	`"finished_at":null,"unique_key":"u-1","tags":["a","b"],"metadata":{},"last_error":null,"result":null,` +
	`"progress":42,"cancel_requested":false,"rescues":2,"dead_reason":null,` +
	`"lease":{"worker_id":"10.0.0.5:8080/w-3","token":"0123456789abcdef","expires_at":"2026-12-03T17:34:50.456Z"},` +
	`"trace":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=1"},` +
	`"concurrency_key":"k","schedule":null,"scheduled_for":"2026-12-03T17:00:00.000Z"}`

// decodeGeneral decodes b as the client did before decodeJobs.
func decodeGeneral(b []byte) ([]*Job, error) {
	var out struct {
		Jobs []*Job `json:"jobs"`
	}
	err := json.NewDecoder(bytes.NewReader(b)).Decode(&out)
	return out.Jobs, err
}

// checkDecodeJobs fails t if decodeJobs reads b and its jobs differ from
// encoding/json's (or encoding/json refuses b); it reports whether it read.
func checkDecodeJobs(t *testing.T, b []byte) bool {
	t.Helper()
	got, ok := decodeJobs(b)
	if !ok {
		return false
	}
	want, err := decodeGeneral(b)
	if err != nil {
		t.Fatalf("decodeJobs read %q, which encoding/json refuses: %v", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("decodeJobs(%q):\n got %s\nwant %s", b, g, w)
	}
	return true
}

// The answers a server writes are read by decodeJobs, equal to
// encoding/json; anything it does not read goes the general way and comes
// out the same.
func TestDecodeJobs(t *testing.T) {
	many := `{"jobs":[` + strings.Repeat(leaseJob+",", 99) + leaseJob + `]}`
	for _, b := range []string{
		`{"jobs":[]}`, many, ` { "jobs" : [ ` + leaseJob + ` , null ] , "next" : {"x":[1]} } `,
		`{"jobs":null}`, `{}`, `{"jobs":[{}]}`, `{"jobs":[{"tags":[],"payload":null,"progress":null}]}`,
		`{"jobs":[{"priority":null,"run_at":null,"tags":[null,"x"],"lease":null,"backoff":{}}]}`,
		`{"jobs":[{"run_at":"2026-12-03T17:04:49+02:00"}]}`,
	} {
		if !checkDecodeJobs(t, []byte(b)) {
			t.Errorf("decodeJobs did not read %s", b)
		}
	}
	for _, b := range []string{
		``, `[]`, `{"jobs":[],"jobs":[]}`, `{"Jobs":[]}`, `{"jobs":[{"ID":"x"}]}`, `{"jobs":[{"id":"a\nb"}]}`,
		`{"jobs":[{"id":"a\u0041"}]}`, `{"jobs":[{"priority":1.5}]}`, `{"jobs":[{"priority":"1"}]}`,
		`{"jobs":[{"attempts":[]}]}`, `{"jobs":[{"run_at":"2026-02-30T00:00:00.000Z"}]}`,
		`{"jobs":[{"priority":99999999999999999999}]}`, `{"jobs":[{"id":"x","id":"y"}]}`, `{"jobs":[` + leaseJob,
		`{"jobs":[{"payload":{"a":01}}]}`, `{"jobs":[{"ſtate":"x"}]}`, `{"jobs":[{"ATTEMPTS":[]}]}`, `{"jobs":[{"kind":"` + "\xff" + `"}]}`,
	} {
		if checkDecodeJobs(t, []byte(b)) {
			t.Errorf("decodeJobs read %q, which is for the general way", b)
		}
		var a leaseAnswer
		errA := a.decodeBody([]byte(b))
		want, errWant := decodeGeneral([]byte(b))
		if (errA == nil) != (errWant == nil) || !reflect.DeepEqual(a.Jobs, want) {
			t.Errorf("decodeBody(%q) = %v, %v; encoding/json %v, %v", b, a.Jobs, errA, want, errWant)
		}
	}
}

// Wherever decodeJobs reads an input, it reads what encoding/json reads.
func FuzzDecodeJobs(f *testing.F) {
	for _, s := range []string{`{"jobs":[` + leaseJob + `]}`, `{"jobs":[]}`, `{"jobs":[{"tags":[null]}]}`,
		`{"jobs":[{"payload":{"a":[1,{"b":"\u00e9"}]},"priority":-0}]}`, `{"jobs":null,"x":1e5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeJobs(t, b)
	})
}

func BenchmarkDecodeLease(b *testing.B) {
	body := []byte(`{"jobs":[` + strings.Repeat(leaseJob+",", 99) + leaseJob + `]}`)
	b.Run("decodeJobs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeJobs(body); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeGeneral(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
