package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tetherq/tether/store"
)

// Ack, fail, extend and release serve the holder of a lease. Each presents
// the token; one that is not the job's current lease is 409 lease_lost (the
// store's fencing) and changes nothing.

type ackRequest struct {
	Token  *string         `json:"token"`
	Result json.RawMessage `json:"result"`
}

func (req *ackRequest) check() error { return checkToken("token", req.Token) }

// ack handles POST /v1/jobs/{id}/ack: the job succeeded.
func (a *API) ack(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	var req ackRequest
	if !a.decode(w, r, &req) {
		return
	}
	job, err := a.store.JobAck(r.Context(), &store.JobAckParams{
		ID: id, Token: *req.Token, Result: nullAsNone(req.Result), Now: now,
	})
	if err == nil {
		a.metrics.settled.WithLabelValues(outcomeSucceeded).Inc()
	}
	a.answerJob(w, r, id, job, err, now)
}

type failRequest struct {
	Token     *string `json:"token"`
	Error     *string `json:"error"`
	Retry     *bool   `json:"retry"`
	RetryInMS *int64  `json:"retry_in_ms"`
}

func (req *failRequest) check() error { return req.checkAt("") }

// checkAt validates with prefix before each field name.
func (req *failRequest) checkAt(prefix string) error {
	return firstErr(
		checkToken(prefix+"token", req.Token),
		required(prefix+"error", req.Error),
		checkRange(prefix+"retry_in_ms", req.RetryInMS, 0, maxDelayMS),
	)
}

// params converts a checked request; retry defaults to true, and the error
// text is cut to store.MaxErrorBytes.
func (req *failRequest) params(id string) store.JobFailParams {
	p := store.JobFailParams{ID: id, Token: *req.Token, Error: store.CapError(*req.Error)}
	p.NoRetry = req.Retry != nil && !*req.Retry
	if req.RetryInMS != nil {
		d := millis(*req.RetryInMS)
		p.RetryIn = &d
	}
	return p
}

// failJob handles POST /v1/jobs/{id}/fail: the failure decisions of API.md
// pick a retry or the dead state.
func (a *API) failJob(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	var req failRequest
	if !a.decode(w, r, &req) {
		return
	}
	p := req.params(id)
	p.Now = now
	job, err := a.store.JobFail(r.Context(), &p)
	if err == nil {
		a.metrics.settled.WithLabelValues(outcomeFailed).Inc()
	}
	a.answerJob(w, r, id, job, err, now)
}

type settleRequest struct {
	Acks  []json.RawMessage `json:"acks"`
	Fails []json.RawMessage `json:"fails"`
}

func (req *settleRequest) check() error {
	n := len(req.Acks) + len(req.Fails)
	if n < 1 || n > maxItems {
		return invalid("acks", "and fails together must have 1..%d items", maxItems)
	}
	return nil
}

type settleAck struct {
	ID     *string         `json:"id"`
	Token  *string         `json:"token"`
	Result json.RawMessage `json:"result"`
}

// settleFail is a fail request naming its job.
type settleFail struct {
	ID        *string `json:"id"`
	Token     *string `json:"token"`
	Error     *string `json:"error"`
	Retry     *bool   `json:"retry"`
	RetryInMS *int64  `json:"retry_in_ms"`
}

func (f *settleFail) fail() *failRequest {
	return &failRequest{Token: f.Token, Error: f.Error, Retry: f.Retry, RetryInMS: f.RetryInMS}
}

type settleResult struct {
	ID   string `json:"id"`
	OK   bool   `json:"ok"`
	Code string `json:"code,omitempty"`
}

type settleView struct {
	Results []settleResult `json:"results"`
}

// settle handles POST /v1/settle: many acks and fails in one transaction,
// one result per item, acks first. An item whose lease is lost or whose job
// is gone fails alone, with its code.
func (a *API) settle(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	p, ids, err := decodeSettle(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	p.Now = now
	errs, err := a.store.JobSettle(r.Context(), p)
	if err == nil && len(errs) != len(ids) {
		err = fmt.Errorf("settle: the store answered %d results for %d items", len(errs), len(ids))
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.metrics.countSettled(len(p.Acks), errs)
	writeJSON(w, http.StatusOK, settleView{Results: a.settleResults(r, ids, errs)})
}

// settleResults pairs each item with its outcome. Item errors other than
// the store's sentinels are logged and reported as internal.
func (a *API) settleResults(r *http.Request, ids []string, errs []error) []settleResult {
	out := make([]settleResult, len(ids))
	for i, id := range ids {
		out[i] = settleResult{ID: id, OK: errs[i] == nil}
		if errs[i] == nil {
			continue
		}
		out[i].Code = codeOf(errs[i])
		if out[i].Code == "" {
			out[i].Code = codeInternal
			a.log.ErrorContext(r.Context(), "settle item failed", "job_id", id, "err", errs[i])
		}
	}
	return out
}

// decodeSettle reads a settle body: the plain acks workers send most by
// parseAcks, anything else by encoding/json with every check.
func decodeSettle(r *http.Request) (*store.JobSettleParams, []string, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, nil, err
	}
	if p, ids, ok := parseAcks(body); ok {
		return p, ids, nil
	}
	var req settleRequest
	if err := decodeStrict(body, &req, ""); err != nil {
		return nil, nil, err
	}
	if err := req.check(); err != nil {
		return nil, nil, err
	}
	return req.params()
}

// params decodes and checks every item; errors name it, as "fails[2].token".
func (req *settleRequest) params() (*store.JobSettleParams, []string, error) {
	p := &store.JobSettleParams{}
	var ids []string
	for i, raw := range req.Acks {
		var it settleAck
		prefix := fmt.Sprintf("acks[%d].", i)
		if err := decodeStrict(raw, &it, prefix); err != nil {
			return nil, nil, err
		}
		if err := firstErr(required(prefix+"id", it.ID), checkToken(prefix+"token", it.Token)); err != nil {
			return nil, nil, err
		}
		p.Acks = append(p.Acks, store.JobAckParams{ID: *it.ID, Token: *it.Token, Result: nullAsNone(it.Result)})
		ids = append(ids, *it.ID)
	}
	for i, raw := range req.Fails {
		var it settleFail
		prefix := fmt.Sprintf("fails[%d].", i)
		if err := decodeStrict(raw, &it, prefix); err != nil {
			return nil, nil, err
		}
		if err := firstErr(required(prefix+"id", it.ID), it.fail().checkAt(prefix)); err != nil {
			return nil, nil, err
		}
		p.Fails = append(p.Fails, it.fail().params(*it.ID))
		ids = append(ids, *it.ID)
	}
	return p, ids, nil
}

// nullAsNone treats an explicit JSON null as no value.
func nullAsNone(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	return raw
}
