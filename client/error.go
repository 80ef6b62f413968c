package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Error is a non-2xx answer: the server's problem+json, or just the status
// when the body was something else.
type Error struct {
	Status   int    `json:"status"`
	Code     string `json:"code"` // invalid_request, lease_lost, not_found, …
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	JobID    string `json:"job_id,omitempty"`
	WorkerID string `json:"worker_id,omitempty"`
	Field    string `json:"field,omitempty"`
	// RetryAfter is the answer's Retry-After (429, 503): how long the
	// server asks a client to wait before trying again; 0 without one.
	RetryAfter time.Duration `json:"-"`
}

// Errors to match with errors.Is: an *Error is one of them when its code is.
var (
	ErrNotFound     = &Error{Code: "not_found"}
	ErrLeaseLost    = &Error{Code: "lease_lost"}
	ErrInvalidState = &Error{Code: "invalid_state"}
)

func (e *Error) Error() string {
	msg := fmt.Sprintf("tether: %d %s", e.Status, e.Code)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code != "" && t.Code == e.Code
}

// readError decodes resp's problem+json, keeping the status whatever the
// body holds.
func readError(resp *http.Response) error {
	e := &Error{}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, e) != nil || e.Code == "" {
		e.Detail = string(b)
	}
	e.Status = resp.StatusCode
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	if e.Code == "" {
		e.Code = http.StatusText(resp.StatusCode)
	}
	return e
}
