package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// acksBody is a settle body of n plain acks, encoded as encoding/json (and
// so the client package) encodes them.
func acksBody(n int) []byte {
	type ack struct {
		ID     string          `json:"id,omitempty"`
		Token  string          `json:"token"`
		Result json.RawMessage `json:"result,omitempty"`
	}
	in := struct {
		Acks []ack `json:"acks"`
	}{}
	for i := range n {
		in.Acks = append(in.Acks, ack{ID: fmt.Sprintf("019ae04c-5c1e-7a42-9d0b-%012d", i), Token: strings.Repeat("ab", 32)})
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return b
}

func TestParseAcks(t *testing.T) {
	p, ids, ok := parseAcks(acksBody(3))
	if !ok || len(p.Acks) != 3 || len(ids) != 3 || ids[2] != "019ae04c-5c1e-7a42-9d0b-000000000002" ||
		p.Acks[1].Token != strings.Repeat("ab", 32) || p.Acks[1].ID != ids[1] {
		t.Fatalf("plain acks: ok %v, %+v %q", ok, p, ids)
	}
	// Everything else goes the general way (and gets its field errors there).
	for _, body := range []string{
		``, `{}`, `{"acks":[]}`, `[]`, `{"acks":[{"id":"a","token":"t"}],"fails":[]}`,
		`{"acks":[{"id":"a","token":"t","result":1}]}`, `{"acks":[{"id":"a"}]}`,
		`{"acks":[{"id":"a","token":""}]}`, `{"acks":[{"id":"a","token":"t"},]}`,
		`{"acks":[{"id":"a\u0041","token":"t"}]}`, `{"acks":[{"id":"é","token":"t"}]}`,
		`{"acks":[{"id":"a","token":"t"}]} x`, `{"acks":[{"id":"a","token":"t"}]`,
		`{"acks":[{"token":"t","token":"u"}]}`, `{"acks":[{"id":1,"token":"t"}]}`,
		`{"acks":[{"id":"a","token":"` + strings.Repeat("t", maxTokenLen+1) + `"}]}`,
	} {
		if _, _, ok := parseAcks([]byte(body)); ok {
			t.Errorf("parseAcks took %q", body)
		}
	}
	if _, _, ok := parseAcks(acksBody(maxItems + 1)); ok {
		t.Errorf("parseAcks took %d items", maxItems+1)
	}
	if _, _, ok := parseAcks(acksBody(maxItems)); !ok {
		t.Errorf("parseAcks refused %d items", maxItems)
	}
}

// BenchmarkDecodeSettle decodes 100 plain acks both ways.
func BenchmarkDecodeSettle(b *testing.B) {
	body := acksBody(100)
	b.Run("parseAcks", func(b *testing.B) {
		for b.Loop() {
			if _, _, ok := parseAcks(body); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			var req settleRequest
			if err := decodeStrict(body, &req, ""); err != nil {
				b.Fatal(err)
			}
			if _, _, err := req.params(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
