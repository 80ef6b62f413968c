package client

import (
	"context"
	"net/http"
)

// Enqueue creates a job. A 2xx answer means it is committed; the job is
// the existing one when its unique_key matched an unfinished job.
func (c *Client) Enqueue(ctx context.Context, spec JobSpec) (*Job, error) {
	return c.enqueue(ctx, nil, spec)
}

// EnqueueIdempotent creates a job under an Idempotency-Key: a repeat with
// the same key and spec within 24 h returns the first call's job.
func (c *Client) EnqueueIdempotent(ctx context.Context, key string, spec JobSpec) (*Job, error) {
	return c.enqueue(ctx, http.Header{"Idempotency-Key": {key}}, spec)
}

// EnqueueBatch creates up to 1,000 jobs in one transaction and returns
// them in order.
func (c *Client) EnqueueBatch(ctx context.Context, specs []JobSpec) ([]*Job, error) {
	var out struct {
		Jobs []*Job `json:"jobs"`
	}
	in := struct {
		Jobs []JobSpec `json:"jobs"`
	}{specs}
	if err := c.do(ctx, http.MethodPost, "/v1/jobs/batch", nil, in, &out); err != nil {
		return nil, err
	}
	return out.Jobs, nil
}

func (c *Client) enqueue(ctx context.Context, h http.Header, spec JobSpec) (*Job, error) {
	var j Job
	if err := c.do(ctx, http.MethodPost, "/v1/jobs", h, spec, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// GetJob returns a job with its attempts. The error is ErrNotFound (with
// errors.Is) for an unknown id.
func (c *Client) GetJob(ctx context.Context, id string) (*Job, error) {
	var j Job
	if err := c.do(ctx, http.MethodGet, "/v1/jobs/"+escape(id), nil, nil, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// DeleteJob removes a job that is not running (admin role). The error is
// ErrNotFound for an unknown id, ErrInvalidState for a running job.
func (c *Client) DeleteJob(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/jobs/"+escape(id), nil, nil, nil)
}
