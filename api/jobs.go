package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"

	"github.com/tetherq/tether/store"
)

// enqueue handles POST /v1/jobs: 201 with the new job, or 200 with the
// job a unique_key matched or an Idempotency-Key replay names.
func (a *API) enqueue(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	body, err := readBody(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	key, err := idempotencyKey(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	spec, err := decodeSpec(body, "", now, traceOf(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	p := &store.JobEnqueueParams{Jobs: []store.JobSpec{spec}, Now: now}
	if key != "" {
		p.IdempotencyKey, p.RequestHash = jobKey(key), requestHash(body)
	}
	res, err := a.store.JobEnqueue(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.metrics.countEnqueued(res)
	status := http.StatusCreated
	if res.Replayed || existing(res, 0) {
		status = http.StatusOK
	}
	writeJSON(w, status, viewJob(res.Jobs[0], now))
}

type batchRequest struct {
	Jobs []json.RawMessage `json:"jobs"`
}

func (req *batchRequest) check() error {
	if len(req.Jobs) < 1 || len(req.Jobs) > maxItems {
		return invalid("jobs", "must have 1..%d items", maxItems)
	}
	return nil
}

type jobsView struct {
	Jobs []any `json:"jobs"`
}

// enqueueBatch handles POST /v1/jobs/batch: all jobs in one transaction,
// answered in order. Errors name the item, as in "jobs[3].priority".
func (a *API) enqueueBatch(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	var req batchRequest
	if !a.decode(w, r, &req) {
		return
	}
	specs := make([]store.JobSpec, len(req.Jobs))
	trace := traceOf(r)
	for i, raw := range req.Jobs {
		spec, err := decodeSpec(raw, fmt.Sprintf("jobs[%d].", i), now, trace)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		specs[i] = spec
	}
	res, err := a.store.JobEnqueue(r.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.metrics.countEnqueued(res)
	writeJobs(w, http.StatusCreated, res.Jobs, now, newJobView)
}

// existing reports whether the i-th job of an enqueue was found, not made.
func existing(res *store.JobEnqueueResult, i int) bool {
	return res.Replayed || (i < len(res.Existing) && res.Existing[i])
}

// getJob handles GET /v1/jobs/{id}: the job with its attempts.
func (a *API) getJob(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	job, err := a.store.JobGet(r.Context(), &store.JobGetParams{ID: id, Now: now})
	if err != nil {
		a.fail(w, r, err, aboutJob(id))
		return
	}
	writeJSON(w, http.StatusOK, viewJobDetail(job, now))
}

type jobPageView struct {
	Jobs       []any   `json:"jobs"`
	NextCursor *string `json:"next_cursor"`
}

// listJobs handles GET /v1/jobs: a page newest first; next_cursor is the
// last id of a page that is full (limit jobs, or its byte budget spent),
// null after the last one.
func (a *API) listJobs(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	p, err := listParams(r.URL.Query())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	p.Now, p.MaxBytes = now, a.cfg.PageBytes
	jobs, err := a.store.JobList(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	page := jobPageView{Jobs: viewJobs(jobs, now)}
	if len(jobs) == p.Limit || store.PageFull(jobs, p.MaxBytes) {
		page.NextCursor = &jobs[len(jobs)-1].ID
	}
	writeJSON(w, http.StatusOK, page)
}

// listParams validates the query of GET /v1/jobs.
func listParams(q url.Values) (*store.JobListParams, error) {
	p := &store.JobListParams{
		Queue: q.Get("queue"), State: store.State(q.Get("state")), Kind: q.Get("kind"),
		Schedule: q.Get("schedule"), Limit: defaultListLimit, Cursor: q.Get("cursor"),
	}
	var limitErr error
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxListLimit {
			limitErr = invalid("limit", "must be an integer in 1..%d", maxListLimit)
		}
		p.Limit = n
	}
	return p, firstErr(
		when(p.Queue != "" && checkName("queue", p.Queue) != nil, "queue", "must be a queue name"),
		when(p.Kind != "" && checkName("kind", p.Kind) != nil, "kind", "must be a kind name"),
		when(p.Schedule != "" && checkName("schedule", p.Schedule) != nil, "schedule", "must be a schedule name"),
		when(p.State != "" && !p.State.Valid(), "state",
			"must be one of scheduled, available, running, succeeded, dead, cancelled"),
		limitErr,
		when(p.Cursor != "" && !issuedCursor(p.Cursor), "cursor", "must be a next_cursor this server returned"),
	)
}

// issuedCursor reports whether c can be a next_cursor of GET /v1/jobs: the
// id of a job, a UUID in the canonical lower-case form the server writes.
func issuedCursor(c string) bool {
	u, err := uuid.Parse(c)
	return err == nil && u.String() == c
}

// idempotencyKey returns the Idempotency-Key header, "" when absent.
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values("Idempotency-Key")
	if len(vs) == 0 {
		return "", nil
	}
	if len(vs) > 1 {
		return "", invalid("Idempotency-Key", "must be given once")
	}
	return vs[0], checkLen("Idempotency-Key", vs[0], 1, maxKeyLen)
}

// requestHash identifies a request body for Idempotency-Key: the SHA-256 of
// its canonical JSON (re-marshalled, so object keys are sorted and spacing
// dropped), so bodies that differ only in layout count as equal. body has
// been decoded successfully already.
func requestHash(body []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // keep numbers exact: 1 and 1.0 are different bodies
	if err := dec.Decode(&v); err != nil {
		v = string(body)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		canon = body
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}
