package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// HeaderStripeSignature is Stripe's signature header.
const HeaderStripeSignature = "Stripe-Signature"

// VerifyStripe checks a Stripe delivery: header (Stripe-Signature) is
// comma-separated "key=value" pairs with one timestamp "t=<unix seconds>"
// within tolerance of now and one or more "v1=<hex HMAC-SHA256>" entries
// over "t.body", keyed by the endpoint secret string as is ("whsec_…").
// Other schemes (v0 is Stripe's test scheme) never match. Returns
// ErrBadSignature on any failure.
func VerifyStripe(secrets [][]byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var timestamp string
	var sigs []string
	for pair := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
		switch k {
		case "t":
			if timestamp != "" {
				return ErrBadSignature // two timestamps: which one was signed?
			}
			timestamp = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || !inWindow(ts, now, tolerance) {
		return ErrBadSignature
	}
	for _, secret := range secrets {
		want := mac(secret, []byte(timestamp), []byte("."), body)
		for _, sig := range sigs {
			got, err := hex.DecodeString(sig)
			if err == nil && hmac.Equal(want, got) {
				return nil
			}
		}
	}
	return ErrBadSignature
}

// SignStripe returns the Stripe-Signature value Stripe sends for body at
// the unix time timestamp.
func SignStripe(secret []byte, timestamp int64, body []byte) string {
	ts := strconv.FormatInt(timestamp, 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, []byte(ts), []byte("."), body))
}
