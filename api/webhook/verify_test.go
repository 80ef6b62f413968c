package webhook_test

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api/webhook"
)

var (
	now    = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	body   = []byte(`{"id":"evt_1","type":"ping"}`)
	key    = []byte("0123456789abcdef0123456789abcdef")
	other  = []byte("another key of thirty-two bytes!")
	window = webhook.DefaultTolerance
)

// flip returns b with its i-th byte changed.
func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 1
	return c
}

func TestVerifyStandard(t *testing.T) {
	t.Parallel()
	ts := now.Unix()
	good := webhook.SignStandard(key, "msg_1", ts, body)
	bad := webhook.SignStandard(other, "msg_1", ts, body)
	tests := []struct {
		name      string
		keys      [][]byte
		id        string
		timestamp int64
		signature string
		body      []byte
		ok        bool
	}{
		{"good", [][]byte{key}, "msg_1", ts, good, body, true},
		{"second key matches (rotation)", [][]byte{other, key}, "msg_1", ts, good, body, true},
		{"one bad entry, one good", [][]byte{key}, "msg_1", ts, bad + " " + good, body, true},
		{"undecodable entry, then good", [][]byte{key}, "msg_1", ts, "v1,!!!not-base64 " + good, body, true},
		{"v1a entry is not v1", [][]byte{key}, "msg_1", ts, "v1a," + strings.TrimPrefix(good, "v1,"), body, false},
		{"body changed by one byte", [][]byte{key}, "msg_1", ts, good, flip(body, 3), false},
		{"wrong secret", [][]byte{other}, "msg_1", ts, good, body, false},
		{"signed for another webhook-id", [][]byte{key}, "msg_2", ts, good, body, false},
		{"timestamp 10 minutes old", [][]byte{key}, "msg_1", ts - 600,
			webhook.SignStandard(key, "msg_1", ts-600, body), body, false},
		{"timestamp 10 minutes ahead", [][]byte{key}, "msg_1", ts + 600,
			webhook.SignStandard(key, "msg_1", ts+600, body), body, false},
		{"timestamp 4 minutes old", [][]byte{key}, "msg_1", ts - 240,
			webhook.SignStandard(key, "msg_1", ts-240, body), body, true},
		{"no signature", [][]byte{key}, "msg_1", ts, "", body, false},
		{"no id", [][]byte{key}, "", ts, webhook.SignStandard(key, "", ts, body), body, false},
		{"no keys", nil, "msg_1", ts, good, body, false},
	}
	for _, tt := range tests {
		err := webhook.VerifyStandard(tt.keys, tt.id, strconv.FormatInt(tt.timestamp, 10), tt.signature, tt.body, now, window)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, webhook.ErrBadSignature)) {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
	if err := webhook.VerifyStandard([][]byte{key}, "msg_1", "soon", good, body, now, window); err == nil {
		t.Error("a timestamp that is no number verified")
	}
}

// TestStandardVector checks the pair against a delivery signed apart from
// this package, with Python's hmac and base64 modules.
func TestStandardVector(t *testing.T) {
	t.Parallel()
	k, err := webhook.DecodeStandardSecret("whsec_dGV0aGVyIHN0YW5kYXJkLXdlYmhvb2tzIHRlc3Qga2V5")
	if err != nil {
		t.Fatal(err)
	}
	const id, ts = "msg_tether_vector_1", "1893553445"
	payload := []byte(`{"type": "invoice.paid", "n": 7}`)
	const sig = "v1,FAyH/uugqlLrmrXeDk9ym6SjQyMCBCKm/275lDwOvDU="
	at := time.Unix(1893553445+60, 0)
	if err := webhook.VerifyStandard([][]byte{k}, id, ts, sig, payload, at, window); err != nil {
		t.Errorf("vector: %v", err)
	}
	if got := webhook.SignStandard(k, id, 1893553445, payload); got != sig {
		t.Errorf("SignStandard = %s, want %s", got, sig)
	}
}

func TestDecodeStandardSecret(t *testing.T) {
	t.Parallel()
	raw := base64.StdEncoding.EncodeToString(key)
	for _, s := range []string{"whsec_" + raw, raw} {
		k, err := webhook.DecodeStandardSecret(s)
		if err != nil || string(k) != string(key) {
			t.Errorf("DecodeStandardSecret(%q) = %q, %v", s, k, err)
		}
	}
	for _, s := range []string{"whsec_", "whsec_!!", "whsec_" + raw[:5]} {
		if _, err := webhook.DecodeStandardSecret(s); err == nil {
			t.Errorf("DecodeStandardSecret(%q) succeeded", s)
		}
	}
}

func TestVerifyGitHub(t *testing.T) {
	t.Parallel()
	good := webhook.SignGitHub(key, body)
	tests := []struct {
		name      string
		secrets   [][]byte
		signature string
		body      []byte
		ok        bool
	}{
		{"good", [][]byte{key}, good, body, true},
		{"second secret matches (rotation)", [][]byte{other, key}, good, body, true},
		{"body changed by one byte", [][]byte{key}, good, flip(body, 0), false},
		{"wrong secret", [][]byte{other}, good, body, false},
		{"sha1 header form", [][]byte{key}, "sha1=" + strings.TrimPrefix(good, "sha256="), body, false},
		{"not hex", [][]byte{key}, "sha256=zz", body, false},
		{"truncated", [][]byte{key}, good[:len(good)-2], body, false},
		{"empty", [][]byte{key}, "", body, false},
		{"upper-case hex", [][]byte{key}, "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), body, true},
	}
	for _, tt := range tests {
		err := webhook.VerifyGitHub(tt.secrets, tt.signature, tt.body)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// TestGitHubVector is the example of GitHub's documentation on validating
// deliveries: secret "It's a Secret to Everybody", body "Hello, World!".
func TestGitHubVector(t *testing.T) {
	t.Parallel()
	const sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if err := webhook.VerifyGitHub([][]byte{[]byte("It's a Secret to Everybody")}, sig, []byte("Hello, World!")); err != nil {
		t.Error(err)
	}
}

// TestStripeVector: a delivery signed apart from this package, with
// Python's hmac module, keyed by the whole secret string.
func TestStripeVector(t *testing.T) {
	t.Parallel()
	const header = "t=1893553445,v1=39de7d7ef59dc0724e01c68bd241baa0d45da358fae9370a43c3b26c0b933915"
	payload := []byte(`{"id": "evt_tether_1", "object": "event"}`)
	err := webhook.VerifyStripe([][]byte{[]byte("whsec_stripe_vector")}, header, payload, time.Unix(1893553445-30, 0), window)
	if err != nil {
		t.Error(err)
	}
}

func TestVerifyStripe(t *testing.T) {
	t.Parallel()
	ts := now.Unix()
	secret := []byte("whsec_stripe_test_secret")
	good := webhook.SignStripe(secret, ts, body)
	v1 := func(h string) string { _, v, _ := strings.Cut(h, ",v1="); return v }
	wrong := v1(webhook.SignStripe([]byte("whsec_other"), ts, body))
	tests := []struct {
		name   string
		header string
		body   []byte
		ok     bool
	}{
		{"good", good, body, true},
		{"v0 and two v1, one good", "t=" + strconv.FormatInt(ts, 10) + ",v0=abc,v1=" + wrong + ",v1=" + v1(good), body, true},
		{"spaces around pairs", strings.ReplaceAll(good, ",", ", "), body, true},
		{"undecodable v1 then good", strings.Replace(good, ",v1=", ",v1=xyz,v1=", 1), body, true},
		{"body changed by one byte", good, flip(body, 5), false},
		{"wrong secret", webhook.SignStripe([]byte("whsec_other"), ts, body), body, false},
		{"timestamp 10 minutes old", webhook.SignStripe(secret, ts-600, body), body, false},
		{"timestamp 10 minutes ahead", webhook.SignStripe(secret, ts+600, body), body, false},
		{"timestamp replaced", "t=" + strconv.FormatInt(ts+1, 10) + ",v1=" + v1(good), body, false},
		{"two timestamps", good + ",t=" + strconv.FormatInt(ts, 10), body, false},
		{"no timestamp", "v1=" + v1(good), body, false},
		{"only v0", "t=" + strconv.FormatInt(ts, 10) + ",v0=" + v1(good), body, false},
		{"empty", "", body, false},
	}
	for _, tt := range tests {
		err := webhook.VerifyStripe([][]byte{[]byte("whsec_rotated_away"), secret}, tt.header, tt.body, now, window)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
