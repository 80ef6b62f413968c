package client

import (
	"bytes"
	"encoding/json"
)

// settleAnswer is the answer to a settle.
type settleAnswer struct {
	Results []SettleResult `json:"results"`
}

// decodeBody decodes b by decodeResults, or the general way when that one
// does not read it.
func (a *settleAnswer) decodeBody(b []byte) error {
	if results, ok := decodeResults(b); ok {
		a.Results = results
		return nil
	}
	type plain settleAnswer // without decodeBody
	return json.NewDecoder(bytes.NewReader(b)).Decode((*plain)(a))
}

// resultKeys are the keys of a settle result, in SettleResult's order.
var resultKeys = []string{"id", "ok", "code"}

// decodeResults reads a settle answer, {"results": [{"id", "ok", "code"},
// …]}, the way encoding/json would into a struct of one Results field, in
// one pass (encoding/json's was a sixth of a busy worker's CPU). Like
// decodeJobs, it reads the shape the server writes and answers ok false at
// anything else; FuzzDecodeResults holds it to encoding/json.
func decodeResults(b []byte) (results []SettleResult, ok bool) {
	d := &jobsDecoder{b: b}
	if !d.byte('{') {
		return nil, false
	}
	seen := false
	for first := true; ; first = false {
		if d.byte('}') {
			return results, true
		}
		if !first && !d.byte(',') {
			return nil, false
		}
		key, ok := d.key()
		if !ok {
			return nil, false
		}
		if string(key) != "results" {
			if foldEqual(key, "results") || !d.skip() {
				return nil, false
			}
			continue
		}
		if seen {
			return nil, false // encoding/json would decode into the first
		}
		seen = true
		if d.null() {
			results = nil
			continue
		}
		if results, ok = d.results(); !ok {
			return nil, false
		}
	}
}

// results reads an array of settle results (a null element is a zero
// result).
func (d *jobsDecoder) results() ([]SettleResult, bool) {
	if !d.byte('[') {
		return nil, false
	}
	out := []SettleResult{}
	if d.byte(']') {
		return out, true
	}
	for {
		var r SettleResult
		if !d.null() && !d.result(&r) {
			return nil, false
		}
		out = append(out, r)
		if d.byte(']') {
			return out, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

// result reads one settle result object.
func (d *jobsDecoder) result(r *SettleResult) bool {
	var o object
	if !o.open(d) {
		return false
	}
	for {
		k, more := o.next(d, resultKeys)
		if !more {
			return o.ok
		}
		ok := false
		switch k {
		case 0:
			r.ID, ok = d.strField(r.ID)
		case 1:
			ok = d.bool(&r.OK)
		case 2:
			r.Code, ok = d.strField(r.Code)
		}
		if !ok {
			return false
		}
	}
}
