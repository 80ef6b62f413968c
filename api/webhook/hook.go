package webhook

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Scheme names how a sender signs its deliveries.
type Scheme string

const (
	SchemeStandard Scheme = "standard-webhooks"
	SchemeGitHub   Scheme = "github"
	SchemeStripe   Scheme = "stripe"
	// SchemeNone verifies nothing: the API asks for a bearer token instead.
	SchemeNone Scheme = "none"
)

// Signed reports whether the scheme's signature is the credential.
func (s Scheme) Signed() bool { return s != SchemeNone }

// DedupesBody reports whether a delivery is also known by its signed body:
// whether a body seen before is the same delivery whatever id it comes
// under. True for GitHub alone, whose signature covers the body but not
// X-GitHub-Delivery, so a captured delivery verifies again under any fresh
// id. Standard Webhooks signs the id itself and Stripe's id is inside the
// signed body, so their ids cannot be changed; a "none" hook's identical
// bodies may well be distinct requests.
func (s Scheme) DedupesBody() bool { return s == SchemeGitHub }

// timestamped reports whether the scheme signs a timestamp, which the
// hook's Tolerance bounds.
func (s Scheme) timestamped() bool { return s == SchemeStandard || s == SchemeStripe }

// Hook is one configured webhook endpoint, POST /v1/hooks/{Name}: every
// verified delivery becomes a job of Kind in Queue.
type Hook struct {
	Name  string
	Queue string
	Kind  string
	// Scheme and Keys verify deliveries; Keys are the HMAC keys of the
	// configured secrets (for standard-webhooks, decoded from whsec_).
	Scheme Scheme
	Keys   [][]byte
	// Tolerance bounds the skew of signed timestamps (standard-webhooks,
	// stripe).
	Tolerance time.Duration
	// Dedupe is how long a delivery is remembered (its id, and for GitHub
	// its body). For a timestamped scheme it is at least twice Tolerance.
	Dedupe time.Duration
	// Headers are copied into the job's payload besides the scheme's own.
	Headers []string
}

// Verify checks a delivery's signature over the raw body. Returns
// ErrBadSignature on any failure; a SchemeNone hook verifies everything.
func (h *Hook) Verify(header http.Header, body []byte, now time.Time) error {
	switch h.Scheme {
	case SchemeStandard:
		return VerifyStandard(h.Keys, header.Get(HeaderWebhookID), header.Get(HeaderWebhookTimestamp),
			header.Get(HeaderWebhookSignature), body, now, h.Tolerance)
	case SchemeGitHub:
		return VerifyGitHub(h.Keys, header.Get(HeaderGitHubSignature), body)
	case SchemeStripe:
		return VerifyStripe(h.Keys, header.Get(HeaderStripeSignature), body, now, h.Tolerance)
	case SchemeNone:
		return nil
	}
	return ErrBadSignature
}

// ErrNoDeliveryID is returned by DeliveryID when a signed delivery lacks
// the id its scheme promises.
var ErrNoDeliveryID = errors.New("webhook: the delivery has no id")

// maxDeliveryID bounds a delivery id, which becomes part of a stored key.
const maxDeliveryID = 255

// DeliveryID returns the sender's id of a verified delivery: webhook-id,
// X-GitHub-Delivery, or the "id" of a Stripe event body. A SchemeNone hook
// takes the optional Idempotency-Key header and returns "" without one.
// Returns ErrNoDeliveryID when a signed scheme's id is missing or longer
// than 255 bytes.
func (h *Hook) DeliveryID(header http.Header, body []byte) (string, error) {
	var id string
	switch h.Scheme {
	case SchemeStandard:
		id = header.Get(HeaderWebhookID)
	case SchemeGitHub:
		id = header.Get(HeaderGitHubDelivery)
	case SchemeStripe:
		var event struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(body, &event)
		id = event.ID
	case SchemeNone:
		id = header.Get("Idempotency-Key")
		if id == "" {
			return "", nil
		}
	}
	if id == "" || len(id) > maxDeliveryID {
		return "", ErrNoDeliveryID
	}
	return id, nil
}

// schemeHeaders are the headers each scheme copies into a job's payload:
// what a handler needs to know what happened, never the signature.
var schemeHeaders = map[Scheme][]string{
	SchemeStandard: {HeaderWebhookID, HeaderWebhookTimestamp},
	SchemeGitHub: {HeaderGitHubEvent, HeaderGitHubDelivery, "X-GitHub-Hook-ID",
		"X-GitHub-Hook-Installation-Target-Type", "X-GitHub-Hook-Installation-Target-ID"},
}

// Payload is a job's payload for a delivery: {"headers": {...}, "body":
// ...}, headers the scheme's own and the hook's, by lower-case name, and the
// body as JSON when it is JSON, else {"base64": "..."}.
func (h *Hook) Payload(header http.Header, body []byte) json.RawMessage {
	names := append([]string{"Content-Type"}, schemeHeaders[h.Scheme]...)
	selected := map[string]string{}
	for _, name := range append(names, h.Headers...) {
		if v := header.Get(name); v != "" {
			selected[strings.ToLower(name)] = v
		}
	}
	v := struct {
		Headers map[string]string `json:"headers"`
		Body    any               `json:"body"`
	}{Headers: selected, Body: json.RawMessage(body)}
	if !json.Valid(body) {
		v.Body = map[string]string{"base64": base64.StdEncoding.EncodeToString(body)}
	}
	out, err := json.Marshal(v)
	if err != nil {
		// Unreachable: body is valid JSON and the rest are strings. Keep
		// the delivery anyway, as bytes.
		out, _ = json.Marshal(map[string]any{"headers": selected,
			"body": map[string]string{"base64": base64.StdEncoding.EncodeToString(body)}})
	}
	return out
}
