package webhook

import (
	"crypto/hmac"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (standardwebhooks.com) headers.
const (
	HeaderWebhookID        = "Webhook-Id"
	HeaderWebhookTimestamp = "Webhook-Timestamp"
	HeaderWebhookSignature = "Webhook-Signature"
)

// standardPrefix starts a Standard Webhooks secret; the rest is the key in
// base64.
const standardPrefix = "whsec_"

// DecodeStandardSecret returns the HMAC key of a Standard Webhooks secret:
// "whsec_" followed by the key in base64 (the prefix may be left out).
func DecodeStandardSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, standardPrefix))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("webhook: a standard-webhooks secret is %q followed by a base64 key", standardPrefix)
	}
	return key, nil
}

// VerifyStandard checks a Standard Webhooks delivery: the signature header
// holds space-separated entries "v1,<base64 HMAC-SHA256>" over
// "id.timestamp.body" under one of keys, and timestamp (unix seconds) is
// within tolerance of now. Entries of other versions (v1a is asymmetric)
// never match. Returns ErrBadSignature on any failure.
func VerifyStandard(keys [][]byte, id, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if id == "" || err != nil || !inWindow(ts, now, tolerance) {
		return ErrBadSignature
	}
	for _, key := range keys {
		want := mac(key, []byte(id), []byte("."), []byte(timestamp), []byte("."), body)
		for entry := range strings.FieldsSeq(signature) {
			version, sig, ok := strings.Cut(entry, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(sig)
			if err == nil && hmac.Equal(want, got) {
				return nil
			}
		}
	}
	return ErrBadSignature
}

// SignStandard returns a Standard Webhooks signature header value (one v1
// entry) for a delivery: what a sender computes.
func SignStandard(key []byte, id string, timestamp int64, body []byte) string {
	ts := strconv.FormatInt(timestamp, 10)
	sum := mac(key, []byte(id), []byte("."), []byte(ts), []byte("."), body)
	return "v1," + base64.StdEncoding.EncodeToString(sum)
}
