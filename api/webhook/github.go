package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"strings"
)

// GitHub's webhook headers.
const (
	HeaderGitHubSignature = "X-Hub-Signature-256"
	HeaderGitHubDelivery  = "X-GitHub-Delivery"
	HeaderGitHubEvent     = "X-GitHub-Event"
)

// VerifyGitHub checks a GitHub delivery: signature (X-Hub-Signature-256) is
// "sha256=" and the hex HMAC-SHA256 of body under one of secrets. GitHub
// signs neither a timestamp nor X-GitHub-Delivery: a captured delivery
// verifies again under any id, at any time, so its body identifies it too
// (Scheme.DedupesBody). Returns ErrBadSignature on any failure.
func VerifyGitHub(secrets [][]byte, signature string, body []byte) error {
	hexSum, ok := strings.CutPrefix(signature, "sha256=")
	if !ok {
		return ErrBadSignature
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return ErrBadSignature
	}
	for _, secret := range secrets {
		if hmac.Equal(mac(secret, body), got) {
			return nil
		}
	}
	return ErrBadSignature
}

// SignGitHub returns the X-Hub-Signature-256 value GitHub sends for body.
func SignGitHub(secret, body []byte) string {
	return "sha256=" + hex.EncodeToString(mac(secret, body))
}
