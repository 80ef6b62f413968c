package client

import (
	"context"
	"net/http"
)

// QueueLimits are a queue's flow-control limits (PUT
// /v1/queues/{name}/limits); a nil field is no limit.
type QueueLimits struct {
	Concurrency    *int       `json:"concurrency"`
	Rate           *QueueRate `json:"rate"`
	KeyConcurrency *int       `json:"key_concurrency"`
	KeyRate        *QueueRate `json:"key_rate"`
}

// QueueRate is at most Limit lease starts per PeriodMS, plus Burst.
type QueueRate struct {
	Limit    int   `json:"limit"`
	PeriodMS int64 `json:"period_ms"`
	Burst    int   `json:"burst"`
}

// SetQueueLimits replaces a queue's limits (admin role), creating the
// queue if needed; they hold across every replica from the next lease.
func (c *Client) SetQueueLimits(ctx context.Context, queue string, l QueueLimits) error {
	return c.do(ctx, http.MethodPut, "/v1/queues/"+escape(queue)+"/limits", nil, l, nil)
}

// ClearQueueLimits removes a queue's limits (admin role). The error is
// ErrNotFound for a queue the server does not list.
func (c *Client) ClearQueueLimits(ctx context.Context, queue string) error {
	return c.do(ctx, http.MethodDelete, "/v1/queues/"+escape(queue)+"/limits", nil, nil, nil)
}
