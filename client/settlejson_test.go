package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// settleResult is one result as a server's settle answer holds it.
const settleResult = `{"id":"019ae04c-5c1e-7a42-9d0b-3f2f5e4b7a10","ok":true}`

// decodeResultsGeneral decodes b as the client did before decodeResults.
func decodeResultsGeneral(b []byte) ([]SettleResult, error) {
	var out struct {
		Results []SettleResult `json:"results"`
	}
	err := json.NewDecoder(bytes.NewReader(b)).Decode(&out)
	return out.Results, err
}

// checkDecodeResults fails t if decodeResults reads b and its results
// differ from encoding/json's (or encoding/json refuses b); it reports
// whether it read.
func checkDecodeResults(t *testing.T, b []byte) bool {
	t.Helper()
	got, ok := decodeResults(b)
	if !ok {
		return false
	}
	want, err := decodeResultsGeneral(b)
	if err != nil {
		t.Fatalf("decodeResults read %q, which encoding/json refuses: %v", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeResults(%q):\n got %#v\nwant %#v", b, got, want)
	}
	return true
}

// The answers a server writes are read by decodeResults, equal to
// encoding/json; anything it does not read goes the general way and comes
// out the same.
func TestDecodeResults(t *testing.T) {
	many := `{"results":[` + strings.Repeat(settleResult+",", 99) +
		`{"id":"019ae04c-5c1e-7a42-9d0b-3f2f5e4b7a11","ok":false,"code":"lease_lost"}]}`
	for _, b := range []string{
		`{"results":[]}`, many, ` { "results" : [ ` + settleResult + ` , null ] , "next" : {"x":[1]} } `,
		`{"results":null}`, `{}`, `{"results":[{}]}`, `{"results":[{"id":null,"ok":null,"code":null}]}`,
		`{"results":[{"code":"not_found","ok":false,"id":"x"}]}`,
	} {
		if !checkDecodeResults(t, []byte(b)) {
			t.Errorf("decodeResults did not read %s", b)
		}
	}
	for _, b := range []string{
		``, `[]`, `{"results":[],"results":[]}`, `{"Results":[]}`, `{"results":[{"ID":"x"}]}`,
		`{"results":[{"id":"a\nb"}]}`, `{"results":[{"ok":1}]}`, `{"results":[{"id":"x","id":"y"}]}`,
		`{"results":[` + settleResult, `{"results":[{"code":"` + "\xff" + `"}]}`, `{"results":[{"ok":"true"}]}`,
	} {
		if checkDecodeResults(t, []byte(b)) {
			t.Errorf("decodeResults read %q, which is for the general way", b)
		}
		var a settleAnswer
		errA := a.decodeBody([]byte(b))
		want, errWant := decodeResultsGeneral([]byte(b))
		if (errA == nil) != (errWant == nil) || !reflect.DeepEqual(a.Results, want) {
			t.Errorf("decodeBody(%q) = %v, %v; encoding/json %v, %v", b, a.Results, errA, want, errWant)
		}
	}
}

// Wherever decodeResults reads an input, it reads what encoding/json
// reads.
func FuzzDecodeResults(f *testing.F) {
	for _, s := range []string{`{"results":[` + settleResult + `]}`, `{"results":[]}`, `{"results":[null,{}]}`,
		`{"results":[{"id":"x","ok":false,"code":"lease_lost"}],"x":1e5}`, `{"results":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeResults(t, b)
	})
}

func BenchmarkDecodeSettle(b *testing.B) {
	body := []byte(`{"results":[` + strings.Repeat(settleResult+",", 99) + settleResult + `]}`)
	b.Run("decodeResults", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeResults(body); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeResultsGeneral(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
