package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// LeaseRequest asks for up to Max jobs of Queues, waiting up to WaitMS
// (0..30,000) for one to arrive.
type LeaseRequest struct {
	WorkerID string   `json:"worker_id"`
	Queues   []string `json:"queues"`
	Max      int      `json:"max,omitempty"`
	WaitMS   int      `json:"wait_ms,omitempty"`
	Kinds    []string `json:"kinds,omitempty"`
}

// Ack settles a job as succeeded in a Settle call.
type Ack struct {
	ID     string          `json:"id,omitempty"` // empty in an Ack call: the path names the job
	Token  string          `json:"token"`
	Result json.RawMessage `json:"result,omitempty"`
}

// Fail ends a delivery as failed. Retry false sends the job to dead at
// once; RetryInMS overrides the backoff (Fail calls only).
type Fail struct {
	ID        string `json:"id,omitempty"`
	Token     string `json:"token"`
	Error     string `json:"error"`
	Retry     *bool  `json:"retry,omitempty"`
	RetryInMS *int64 `json:"retry_in_ms,omitempty"`
}

// SettleResult is the outcome of one settle item; Code is lease_lost or
// not_found when OK is false.
type SettleResult struct {
	ID   string `json:"id"`
	OK   bool   `json:"ok"`
	Code string `json:"code,omitempty"`
}

// WorkerRegistration describes a worker; an empty ID lets the server pick.
type WorkerRegistration struct {
	ID     string            `json:"id,omitempty"`
	Queues []string          `json:"queues,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Registered is the server's answer to a registration: the worker's id and
// the heartbeat rhythm it expects.
type Registered struct {
	ID                  string `json:"id"`
	HeartbeatIntervalMS int64  `json:"heartbeat_interval_ms"`
	DeadAfterMS         int64  `json:"dead_after_ms"`
}

// HeartbeatResult lists the held jobs whose cancellation was requested (at
// every heartbeat while they are held) and the jobs the worker lost (each
// once): it can no longer settle those. It repeats the rhythm the server
// expects; a server without those fields leaves them 0.
type HeartbeatResult struct {
	Cancel              []string `json:"cancel"`
	Lost                []string `json:"lost"`
	HeartbeatIntervalMS int64    `json:"heartbeat_interval_ms"`
	DeadAfterMS         int64    `json:"dead_after_ms"`
}

// Extended is the answer to Extend.
type Extended struct {
	ExpiresAt       string `json:"expires_at"`
	CancelRequested bool   `json:"cancel_requested"`
}

// Lease takes up to r.Max available jobs; an empty slice means nothing
// arrived within r.WaitMS.
func (c *Client) Lease(ctx context.Context, r LeaseRequest) ([]*Job, error) {
	var out leaseAnswer
	if err := c.do(ctx, http.MethodPost, "/v1/lease", nil, r, &out); err != nil {
		return nil, err
	}
	return out.Jobs, nil
}

// Settle acks and fails many jobs in one transaction; one result per item,
// acks first.
func (c *Client) Settle(ctx context.Context, acks []Ack, fails []Fail) ([]SettleResult, error) {
	in := struct {
		Acks  []Ack  `json:"acks,omitempty"`
		Fails []Fail `json:"fails,omitempty"`
	}{acks, fails}
	var out settleAnswer
	if err := c.do(ctx, http.MethodPost, "/v1/settle", nil, in, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// Ack settles a job as succeeded. The error is ErrLeaseLost when token is
// not the job's current lease.
func (c *Client) Ack(ctx context.Context, id, token string, result json.RawMessage) (*Job, error) {
	return c.jobCall(ctx, id, "ack", Ack{Token: token, Result: result})
}

// Fail ends a delivery as failed (f.ID is ignored: id names the job).
func (c *Client) Fail(ctx context.Context, id string, f Fail) (*Job, error) {
	f.ID = ""
	return c.jobCall(ctx, id, "fail", f)
}

// Release gives a running job back, available again after delayMS, its
// attempt not spent (a job whose cancellation was requested ends cancelled).
func (c *Client) Release(ctx context.Context, id, token string, delayMS int64) (*Job, error) {
	return c.jobCall(ctx, id, "release", struct {
		Token   string `json:"token"`
		DelayMS int64  `json:"delay_ms,omitempty"`
	}{token, delayMS})
}

// Extend pushes a running job's expiry to now + extendMS (0: its
// timeout_ms) and records progress when not nil.
func (c *Client) Extend(ctx context.Context, id, token string, extendMS int64, progress *int) (*Extended, error) {
	in := struct {
		Token    string `json:"token"`
		ExtendMS int64  `json:"extend_ms,omitempty"`
		Progress *int   `json:"progress,omitempty"`
	}{token, extendMS, progress}
	var out Extended
	if err := c.do(ctx, http.MethodPost, "/v1/jobs/"+escape(id)+"/extend", nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RegisterWorker registers (or refreshes) a worker.
func (c *Client) RegisterWorker(ctx context.Context, w WorkerRegistration) (*Registered, error) {
	var out Registered
	if err := c.do(ctx, http.MethodPost, "/v1/workers", nil, w, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Heartbeat is a worker's sign of life; inFlight, when given, names the
// jobs it believes it holds.
func (c *Client) Heartbeat(ctx context.Context, workerID string, inFlight []string) (*HeartbeatResult, error) {
	in := struct {
		InFlight []string `json:"in_flight,omitempty"`
	}{inFlight}
	var out HeartbeatResult
	if err := c.do(ctx, http.MethodPost, "/v1/workers/"+escape(workerID)+"/heartbeat", nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeregisterWorker removes a worker; its running jobs are released at once.
// The error is ErrNotFound for an unknown worker.
func (c *Client) DeregisterWorker(ctx context.Context, workerID string) error {
	return c.do(ctx, http.MethodDelete, "/v1/workers/"+escape(workerID), nil, nil, nil)
}

// jobCall posts in to /v1/jobs/{id}/{action} and decodes the job.
func (c *Client) jobCall(ctx context.Context, id, action string, in any) (*Job, error) {
	var j Job
	if err := c.do(ctx, http.MethodPost, "/v1/jobs/"+escape(id)+"/"+action, nil, in, &j); err != nil {
		return nil, err
	}
	return &j, nil
}
