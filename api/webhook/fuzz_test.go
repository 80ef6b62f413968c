package webhook_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/tetherq/tether/api/webhook"
)

// The fuzz targets feed the verifiers arbitrary headers and bodies. Beyond
// "never panics" each checks the two properties that matter: what the
// sender signs always verifies, and the same signature over a changed body
// never does. Seeds are in testdata/fuzz.

// plausible reports whether ts is a time the verifiers compare at all.
func plausible(ts int64) bool { return ts >= 0 && ts <= 1<<40 }

func FuzzVerifyStandard(f *testing.F) {
	f.Add("msg_1", int64(1893553445), "v1,AAAA v1,bm90IGEgbWFj", []byte(`{"a":1}`))
	f.Fuzz(func(t *testing.T, id string, ts int64, sig string, body []byte) {
		keys := [][]byte{other, key}
		tsText := strconv.FormatInt(ts, 10)
		_ = webhook.VerifyStandard(keys, id, tsText, sig, body, now, window)
		_ = webhook.VerifyStandard(keys, id, sig, sig, body, now, window)
		if id == "" || !plausible(ts) {
			return
		}
		at := time.Unix(ts, 0)
		good := webhook.SignStandard(key, id, ts, body)
		if err := webhook.VerifyStandard(keys, id, tsText, sig+" "+good, body, at, window); err != nil {
			t.Fatalf("a signed delivery did not verify: %v", err)
		}
		changed := append(append([]byte(nil), body...), '!')
		if err := webhook.VerifyStandard(keys, id, tsText, good, changed, at, window); err == nil {
			t.Fatal("a changed body verified")
		}
		if err := webhook.VerifyStandard(keys, id+"x", tsText, good, body, at, window); err == nil {
			t.Fatal("a signature for another id verified")
		}
	})
}

func FuzzVerifyGitHub(f *testing.F) {
	f.Add("sha256=00ff", []byte(`{"zen":"Keep it logically awesome."}`))
	f.Fuzz(func(t *testing.T, sig string, body []byte) {
		keys := [][]byte{other, key}
		_ = webhook.VerifyGitHub(keys, sig, body)
		good := webhook.SignGitHub(key, body)
		if err := webhook.VerifyGitHub(keys, good, body); err != nil {
			t.Fatalf("a signed delivery did not verify: %v", err)
		}
		changed := append(append([]byte(nil), body...), '!')
		if err := webhook.VerifyGitHub(keys, good, changed); err == nil {
			t.Fatal("a changed body verified")
		}
	})
}

func FuzzVerifyStripe(f *testing.F) {
	f.Add("t=1893553445,v1=00,v0=11", int64(1893553445), []byte(`{"id":"evt_1"}`))
	f.Fuzz(func(t *testing.T, header string, ts int64, body []byte) {
		keys := [][]byte{other, key}
		_ = webhook.VerifyStripe(keys, header, body, now, window)
		if !plausible(ts) {
			return
		}
		at := time.Unix(ts, 0)
		good := webhook.SignStripe(key, ts, body)
		if err := webhook.VerifyStripe(keys, good, body, at, window); err != nil {
			t.Fatalf("a signed delivery did not verify: %v", err)
		}
		changed := append(append([]byte(nil), body...), '!')
		if err := webhook.VerifyStripe(keys, good, changed, at, window); err == nil {
			t.Fatal("a changed body verified")
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"hooks":[{"name":"gh","kind":"k","scheme":"github","secrets":["s"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hooks, err := webhook.Parse(data)
		if err != nil {
			return
		}
		for _, h := range hooks {
			timestamped := h.Scheme == webhook.SchemeStandard || h.Scheme == webhook.SchemeStripe
			if h.Name == "" || h.Kind == "" || h.Queue == "" || h.Tolerance <= 0 || h.Dedupe <= 0 ||
				(h.Scheme.Signed() && len(h.Keys) == 0) || (timestamped && h.Dedupe < 2*h.Tolerance) {
				t.Fatalf("Parse accepted %+v", h)
			}
		}
	})
}
