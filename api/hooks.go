package api

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/tetherq/tether/api/webhook"
	"github.com/tetherq/tether/store"
)

// hookRequestHash is the request hash of every webhook delivery's
// idempotency record. It is one constant on purpose: a delivery id seen
// again within the hook's dedupe window answers 200 with the first job id
// whatever the body, because the id is the sender's promise that it is the
// same event (a sender retrying re-serialises; Stripe's id is in the body
// anyway). A different body under a reused id is the sender's mistake, and
// it must not become a second job nor an error the sender retries forever.
const hookRequestHash = "webhook-delivery"

type hookView struct {
	JobID string `json:"job_id"`
}

// hook handles POST /v1/hooks/{name}: verify the raw body, then enqueue
// one job per delivery: per delivery id, and for GitHub also per signed
// body (webhook.Scheme.DedupesBody). 202 with the new job's id, 200 with
// the first job's id for a delivery seen before (even if that job was
// pruned), 401 bad_signature with no hint of what failed, 404 for an
// unknown hook (401 first, when the server has tokens and the request
// none).
// A signed hook's signature is its credential; a "none" hook needs a
// producer or admin token.
func (a *API) hook(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	name := pathParam(r, "name")
	h := a.hooks[name]
	if h == nil {
		// Which hook names exist is for token holders to learn.
		if a.authorize(w, r, RoleAdmin, RoleProducer, RoleWorker) {
			writeProblem(w, newProblem(codeNotFound, "no hook is configured under this name"))
		}
		return
	}
	if !h.Scheme.Signed() && !a.authorize(w, r, RoleAdmin, RoleProducer) {
		return
	}
	body, err := readAll(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if err := h.Verify(r.Header, body, now); err != nil {
		a.metrics.hooks.WithLabelValues(name, hookBadSignature).Inc()
		a.refuse(r, codeBadSignature, "")
		writeProblem(w, newProblem(codeBadSignature, "the delivery's signature does not verify"))
		return
	}
	delivery, err := h.DeliveryID(r.Header, body)
	if errors.Is(err, webhook.ErrNoDeliveryID) {
		a.fail(w, r, invalid(deliveryIDField[h.Scheme], "must carry the sender's delivery id, of at most 255 bytes"))
		return
	}
	spec := store.JobSpec{Queue: h.Queue, Kind: h.Kind, Payload: h.Payload(r.Header, body), Trace: traceOf(r)}
	spec.Normalize(now)
	p := &store.JobEnqueueParams{Jobs: []store.JobSpec{spec}, Now: now}
	if delivery != "" {
		dedupe(p, h, delivery, body)
	}
	res, err := a.store.JobEnqueue(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.metrics.countEnqueued(res)
	if res.Replayed {
		a.metrics.hooks.WithLabelValues(name, hookDuplicate).Inc()
		writeJSON(w, http.StatusOK, hookView{JobID: res.Jobs[0].ID})
		return
	}
	a.metrics.hooks.WithLabelValues(name, hookAccepted).Inc()
	writeJSON(w, http.StatusAccepted, hookView{JobID: res.Jobs[0].ID})
}

// dedupe makes p idempotent for h's dedupe window under the delivery's
// names: its id, and for a scheme that does not sign the id its body too,
// after the id, so that a sender's own retry under the id names the id's
// job even if the body changed.
func dedupe(p *store.JobEnqueueParams, h *webhook.Hook, delivery string, body []byte) {
	p.IdempotencyKey, p.RequestHash, p.IdempotencyTTL = hookKey(h.Name, hookByID, delivery), hookRequestHash, h.Dedupe
	if h.Scheme.DedupesBody() {
		sum := sha256.Sum256(body)
		p.AlsoKeys = []string{hookKey(h.Name, hookByBody, hex.EncodeToString(sum[:]))}
	}
}

// deliveryIDField names where each scheme's delivery id comes from: a
// header, or the Stripe event's "id".
var deliveryIDField = map[webhook.Scheme]string{
	webhook.SchemeStandard: "webhook-id",
	webhook.SchemeGitHub:   "X-GitHub-Delivery",
	webhook.SchemeStripe:   "id",
	webhook.SchemeNone:     "Idempotency-Key",
}

// Results of tether_hook_deliveries_total.
const (
	hookAccepted     = "accepted"
	hookDuplicate    = "duplicate"
	hookBadSignature = "bad_signature"
)
