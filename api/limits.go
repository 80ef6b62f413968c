package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/tetherq/tether/store"
)

// limitsRequest is the body of PUT /v1/queues/{name}/limits, and the
// queue view's limits: each limit null or absent is no limit.
type limitsRequest struct {
	Concurrency    *int         `json:"concurrency"`
	Rate           *rateRequest `json:"rate"`
	KeyConcurrency *int         `json:"key_concurrency"`
	KeyRate        *rateRequest `json:"key_rate"`
}

type rateRequest struct {
	Limit    *int   `json:"limit"`
	PeriodMS *int64 `json:"period_ms"`
	Burst    *int   `json:"burst"`
}

func (req *limitsRequest) check() error {
	return firstErr(
		checkRange("concurrency", req.Concurrency, 1, store.MaxConcurrency),
		req.Rate.check("rate."),
		checkRange("key_concurrency", req.KeyConcurrency, 1, store.MaxConcurrency),
		req.KeyRate.check("key_rate."),
	)
}

func (r *rateRequest) check(p string) error {
	if r == nil {
		return nil
	}
	return firstErr(
		required(p+"limit", r.Limit),
		checkRange(p+"limit", r.Limit, 1, store.MaxRateLimit),
		required(p+"period_ms", r.PeriodMS),
		checkRange(p+"period_ms", r.PeriodMS, 1, store.MaxRatePeriod.Milliseconds()),
		checkRange(p+"burst", r.Burst, 0, store.MaxRateBurst),
	)
}

func (req *limitsRequest) limits() *store.Limits {
	return &store.Limits{Concurrency: req.Concurrency, Rate: req.Rate.rate(),
		KeyConcurrency: req.KeyConcurrency, KeyRate: req.KeyRate.rate()}
}

func (r *rateRequest) rate() *store.Rate {
	if r == nil {
		return nil
	}
	out := &store.Rate{Limit: *r.Limit, Period: millis(*r.PeriodMS)}
	setIf(&out.Burst, r.Burst)
	return out
}

// limitsView is a queue's limits as the API shows them; nil: none.
type limitsView struct {
	Concurrency    *int      `json:"concurrency"`
	Rate           *rateView `json:"rate"`
	KeyConcurrency *int      `json:"key_concurrency"`
	KeyRate        *rateView `json:"key_rate"`
}

type rateView struct {
	Limit    int   `json:"limit"`
	PeriodMS int64 `json:"period_ms"`
	Burst    int   `json:"burst"`
}

func viewLimits(l *store.Limits) *limitsView {
	if l.None() {
		return nil
	}
	return &limitsView{Concurrency: l.Concurrency, Rate: viewRate(l.Rate),
		KeyConcurrency: l.KeyConcurrency, KeyRate: viewRate(l.KeyRate)}
}

func viewRate(r *store.Rate) *rateView {
	if r == nil {
		return nil
	}
	return &rateView{Limit: r.Limit, PeriodMS: r.Period.Milliseconds(), Burst: r.Burst}
}

// setLimits handles PUT /v1/queues/{name}/limits: the queue's limits,
// replaced as a whole, holding across every replica from the next lease.
// A queue unknown so far is created.
func (a *API) setLimits(w http.ResponseWriter, r *http.Request) {
	now, name := a.now(), pathParam(r, "name")
	if err := checkName("name", name); err != nil {
		a.fail(w, r, err)
		return
	}
	var req limitsRequest
	if !a.decode(w, r, &req) {
		return
	}
	a.writeLimits(w, r, name, req.limits(), now)
}

// clearLimits handles DELETE /v1/queues/{name}/limits: 404 for a queue the
// store does not list.
func (a *API) clearLimits(w http.ResponseWriter, r *http.Request) {
	now, name := a.now(), pathParam(r, "name")
	if err := checkName("name", name); err != nil {
		a.fail(w, r, err)
		return
	}
	queues, err := a.store.QueueList(r.Context(), &store.QueueListParams{Now: now})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !listed(queues, name) {
		a.fail(w, r, fmt.Errorf("queue %q: %w", name, store.ErrNotFound))
		return
	}
	a.writeLimits(w, r, name, nil, now)
}

func listed(queues []*store.Queue, name string) bool {
	for _, q := range queues {
		if q.Name == name {
			return true
		}
	}
	return false
}

func (a *API) writeLimits(w http.ResponseWriter, r *http.Request, name string, l *store.Limits, now time.Time) {
	q, err := a.store.QueueSetLimits(r.Context(), &store.QueueSetLimitsParams{Name: name, Limits: l, Now: now})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewQueue(q, now))
}
