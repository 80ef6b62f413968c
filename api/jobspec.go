package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// specRequest is a job spec on the wire. Pointers tell an absent field from
// a zero one; backoff is decoded on its own so its errors name
// "backoff.<field>".
type specRequest struct {
	Kind        *string         `json:"kind"`
	Queue       *string         `json:"queue"`
	Payload     json.RawMessage `json:"payload"`
	Priority    *int            `json:"priority"`
	RunAt       *string         `json:"run_at"`
	DelayMS     *int64          `json:"delay_ms"`
	MaxAttempts *int            `json:"max_attempts"`
	TimeoutMS   *int64          `json:"timeout_ms"`
	Backoff     json.RawMessage `json:"backoff"`
	UniqueKey   *string         `json:"unique_key"`
	Tags        []string        `json:"tags"`
	Metadata    json.RawMessage `json:"metadata"`
	Trace       json.RawMessage `json:"trace"`
	// ConcurrencyKey counts the job toward its queue's per-key limits.
	ConcurrencyKey *string `json:"concurrency_key"`
}

type backoffRequest struct {
	BaseMS *int64 `json:"base_ms"`
	MaxMS  *int64 `json:"max_ms"`
}

type traceRequest struct {
	Parent *string `json:"traceparent"`
	State  *string `json:"tracestate"`
}

// decodeSpec decodes and validates one job spec; prefix ("jobs[3].") goes
// before every field an error names. Defaults are left to Normalize, but a
// delay is turned into run_at = now + delay here. A spec without a trace of
// its own takes the request's (traceOf), which may be nil.
func decodeSpec(data []byte, prefix string, now time.Time, header *store.Trace) (store.JobSpec, error) {
	var req specRequest
	if err := decodeStrict(data, &req, prefix); err != nil {
		return store.JobSpec{}, err
	}
	var bo backoffRequest
	if len(req.Backoff) > 0 && !isNull(req.Backoff) {
		if err := decodeStrict(req.Backoff, &bo, prefix+"backoff."); err != nil {
			return store.JobSpec{}, err
		}
	}
	trace := header
	if len(req.Trace) > 0 && !isNull(req.Trace) {
		var tr traceRequest
		if err := decodeStrict(req.Trace, &tr, prefix+"trace."); err != nil {
			return store.JobSpec{}, err
		}
		if err := checkTrace(prefix+"trace.", tr); err != nil {
			return store.JobSpec{}, err
		}
		trace = &store.Trace{Parent: *tr.Parent}
		setIf(&trace.State, tr.State)
	}
	if err := req.check(bo, prefix); err != nil {
		return store.JobSpec{}, err
	}
	s := req.spec(bo, now)
	s.Trace = trace
	return s, nil
}

// checkTrace validates a spec's trace: 400 naming the field at fault.
func checkTrace(prefix string, tr traceRequest) error {
	if err := required(prefix+"traceparent", tr.Parent); err != nil {
		return err
	}
	if (&store.Trace{Parent: *tr.Parent}).Check() != nil {
		return invalid(prefix+"traceparent", "must be 00-<32 lowercase hex, not all zero>-<16 lowercase hex, not all zero>-<2 hex>")
	}
	if tr.State != nil && len(*tr.State) > store.MaxTraceStateLen {
		return invalid(prefix+"tracestate", "must be at most %d characters", store.MaxTraceStateLen)
	}
	return nil
}

// traceOf is the request's W3C trace context, from its traceparent and
// tracestate headers; nil when it has none or a malformed one, which W3C
// tells a receiver to ignore. A tracestate too long to keep is dropped
// alone.
func traceOf(r *http.Request) *store.Trace {
	parents := r.Header.Values("Traceparent")
	if len(parents) != 1 {
		return nil
	}
	t := &store.Trace{Parent: strings.TrimSpace(parents[0]),
		State: strings.TrimSpace(strings.Join(r.Header.Values("Tracestate"), ","))}
	if len(t.State) > store.MaxTraceStateLen {
		t.State = ""
	}
	if t.Check() != nil {
		return nil
	}
	return t
}

// check validates every field against API.md's value ranges.
func (req *specRequest) check(bo backoffRequest, p string) error {
	var runAtErr error
	if req.RunAt != nil {
		if _, err := time.Parse(time.RFC3339Nano, *req.RunAt); err != nil {
			runAtErr = invalid(p+"run_at", "must be an RFC 3339 time")
		}
	}
	return firstErr(
		required(p+"kind", req.Kind),
		checkOptional(req.Kind, func(v string) error { return checkName(p+"kind", v) }),
		checkOptional(req.Queue, func(v string) error { return checkName(p+"queue", v) }),
		checkRange(p+"priority", req.Priority, -maxPriority, maxPriority),
		runAtErr,
		checkRange(p+"delay_ms", req.DelayMS, 0, maxDelayMS),
		when(req.RunAt != nil && req.DelayMS != nil, p+"delay_ms", "must not be given with run_at"),
		checkRange(p+"max_attempts", req.MaxAttempts, 1, maxMaxAttempts),
		checkRange(p+"timeout_ms", req.TimeoutMS, 1, maxTimeoutMS),
		checkRange(p+"backoff.base_ms", bo.BaseMS, 1, maxBackoffMS),
		checkRange(p+"backoff.max_ms", bo.MaxMS, 1, maxBackoffMS),
		when(bo.BaseMS != nil && bo.MaxMS != nil && *bo.BaseMS > *bo.MaxMS,
			p+"backoff.base_ms", "must not exceed backoff.max_ms"),
		checkOptional(req.UniqueKey, func(v string) error { return checkLen(p+"unique_key", v, 1, maxKeyLen) }),
		checkTags(p+"tags", req.Tags),
		checkObject(p+"metadata", req.Metadata),
		checkOptional(req.ConcurrencyKey, func(v string) error {
			return checkLen(p+"concurrency_key", v, 1, store.MaxConcurrencyKeyLen)
		}),
	)
}

// spec converts a checked request; zero fields take Normalize's defaults.
func (req *specRequest) spec(bo backoffRequest, now time.Time) store.JobSpec {
	s := store.JobSpec{
		Kind: *req.Kind, Payload: req.Payload, UniqueKey: req.UniqueKey,
		Tags: req.Tags, Metadata: req.Metadata, ConcurrencyKey: req.ConcurrencyKey,
	}
	if isNull(s.Payload) {
		s.Payload = nil
	}
	setIf(&s.Queue, req.Queue)
	setIf(&s.Priority, req.Priority)
	setIf(&s.MaxAttempts, req.MaxAttempts)
	if req.RunAt != nil {
		s.RunAt, _ = time.Parse(time.RFC3339Nano, *req.RunAt)
	}
	if req.DelayMS != nil {
		s.RunAt = now.Add(millis(*req.DelayMS))
	}
	if req.TimeoutMS != nil {
		s.Timeout = millis(*req.TimeoutMS)
	}
	if bo.BaseMS != nil {
		s.Backoff.Base = millis(*bo.BaseMS)
	}
	if bo.MaxMS != nil {
		s.Backoff.Max = millis(*bo.MaxMS)
	}
	s.Normalize(now)
	return s
}

// checkOptional runs check on v when it is present.
func checkOptional[T any](v *T, check func(T) error) error {
	if v == nil {
		return nil
	}
	return check(*v)
}

// checkObject accepts an absent value or a JSON object.
func checkObject(field string, raw json.RawMessage) error {
	if len(raw) > 0 && raw[0] != '{' {
		return invalid(field, "must be a JSON object")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(raw, []byte("null")) }

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
