package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/tetherq/tether/store"
)

// Error codes of API.md. Each has one status; see statusOf.
const (
	codeInvalidRequest   = "invalid_request"
	codeUnauthorized     = "unauthorized"
	codeBadSignature     = "bad_signature"
	codeForbidden        = "forbidden"
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeLeaseLost        = "lease_lost"
	codeInvalidState     = "invalid_state"
	codePayloadTooLarge  = "payload_too_large"
	codeIdempotency      = "idempotency_key_reused"
	codeRateLimited      = "rate_limited"
	codeInternal         = "internal"
	codeUnavailable      = "unavailable"
)

// codes maps each error code to its status and title.
var codes = map[string]struct {
	status int
	title  string
}{
	codeInvalidRequest:   {http.StatusBadRequest, "Invalid request"},
	codeUnauthorized:     {http.StatusUnauthorized, "Unauthorized"},
	codeBadSignature:     {http.StatusUnauthorized, "Bad signature"},
	codeForbidden:        {http.StatusForbidden, "Forbidden"},
	codeNotFound:         {http.StatusNotFound, "Not found"},
	codeMethodNotAllowed: {http.StatusMethodNotAllowed, "Method not allowed"},
	codeLeaseLost:        {http.StatusConflict, "Lease lost"},
	codeInvalidState:     {http.StatusConflict, "Invalid state"},
	codePayloadTooLarge:  {http.StatusRequestEntityTooLarge, "Payload too large"},
	codeIdempotency:      {http.StatusUnprocessableEntity, "Idempotency key reused"},
	codeRateLimited:      {http.StatusTooManyRequests, "Rate limited"},
	codeInternal:         {http.StatusInternalServerError, "Internal error"},
	codeUnavailable:      {http.StatusServiceUnavailable, "Unavailable"},
}

// sentinels is the one translation of store errors to error codes, with
// what each means to a client.
var sentinels = []struct {
	err    error
	code   string
	detail string
}{
	{store.ErrNotFound, codeNotFound, "the job or worker does not exist"},
	{store.ErrLeaseLost, codeLeaseLost, "the token is not the job's current lease: " +
		"the job was recovered, timed out, released, settled or leased again"},
	{store.ErrInvalidState, codeInvalidState, "the job's state does not allow this change"},
	{store.ErrConflict, codeIdempotency, "the Idempotency-Key was used with another request body"},
	{store.ErrUnavailable, codeUnavailable, "the store does not answer (down, unreachable or timed out); " +
		"retry after Retry-After seconds"},
}

// problem is an RFC 9457 problem document with Tether's extension members.
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Code     string `json:"code"`
	Field    string `json:"field,omitempty"`
	JobID    string `json:"job_id,omitempty"`
	WorkerID string `json:"worker_id,omitempty"`
}

// newProblem builds the problem for code; code must be a key of codes.
func newProblem(code, detail string) *problem {
	c := codes[code]
	return &problem{
		Type: "urn:tether:error:" + code, Title: c.title, Status: c.status,
		Detail: detail, Code: code,
	}
}

// codeOf returns the error code of a store error, or "" for any other error.
func codeOf(err error) string {
	code, _ := sentinelOf(err)
	return code
}

// sentinelOf returns the code of a store error and its detail, which keeps
// the context the store wrapped around the sentinel.
func sentinelOf(err error) (code, detail string) {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			// An outage's cause names the store's hosts and ports: it
			// stays in the log.
			if msg := err.Error(); msg != s.err.Error() && s.err != store.ErrUnavailable {
				return s.code, s.detail + " (" + msg + ")"
			}
			return s.code, s.detail
		}
	}
	return "", ""
}

// problemOf translates any handler error into its problem. Errors that are
// neither request errors nor store sentinels are internal: their text stays
// in the log, never in the answer.
func problemOf(err error) (p *problem, internal bool) {
	var fe *fieldError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &fe):
		p = newProblem(codeInvalidRequest, fe.Error())
		p.Field = fe.field
	case errors.As(err, &tooBig):
		p = newProblem(codePayloadTooLarge, "the request body exceeds the size limit")
	default:
		code, detail := sentinelOf(err)
		if code == "" {
			return newProblem(codeInternal, "the server failed to handle the request"), true
		}
		p = newProblem(code, detail)
	}
	return p, false
}

// about sets extension members naming what a problem is about.
type about func(*problem)

func aboutJob(id string) about    { return func(p *problem) { p.JobID = id } }
func aboutWorker(id string) about { return func(p *problem) { p.WorkerID = id } }

// fail answers err as a problem, logging internal errors.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error, abouts ...about) {
	p, internal := problemOf(err)
	switch {
	case internal:
		a.log.ErrorContext(r.Context(), "request failed",
			"method", r.Method, "path", r.URL.Path, "err", err)
	case p.Code == codeUnavailable:
		a.log.WarnContext(r.Context(), "store unavailable",
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	for _, f := range abouts {
		f(p)
	}
	writeProblem(w, p)
}

// writeProblem writes p as application/problem+json with its status,
// and a 503 with its Retry-After.
func writeProblem(w http.ResponseWriter, p *problem) {
	if p.Code == codeUnavailable {
		w.Header().Set("Retry-After", retryAfter(store.RetryUnavailable))
	}
	writeBody(w, "application/problem+json", p.Status, p)
}

// writeJSON writes v as application/json with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeBody(w, "application/json", status, v)
}

// internalBody answers a response that cannot be encoded (a stored JSON
// value that is not JSON): nothing else about it can be said.
var internalBody, _ = json.Marshal(newProblem(codeInternal, "the server failed to encode the response"))

func writeBody(w http.ResponseWriter, contentType string, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		contentType, status, body = "application/problem+json", http.StatusInternalServerError, internalBody
	}
	writeWhole(w, contentType, status, append(body, '\n'))
}

// writeWhole answers with body, whole: its length is declared, so the
// answer goes out unchunked and a client can read it into one buffer of
// that size.
func writeWhole(w http.ResponseWriter, contentType string, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// notFound answers routes that do not exist.
func notFound(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, newProblem(codeNotFound, "no route for "+r.URL.EscapedPath()))
}
