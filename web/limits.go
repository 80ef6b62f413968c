package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// limitsForm is a queue's limits as the edit form shows and posts them:
// each field a number or empty for no limit.
type limitsForm struct {
	Concurrency, KeyConcurrency   string
	RateLimit, RatePeriodMS       string
	RateBurst                     string
	KeyRateLimit, KeyRatePeriodMS string
	KeyRateBurst                  string
}

func newLimitsForm(l *store.Limits) limitsForm {
	var f limitsForm
	if l == nil {
		return f
	}
	f.Concurrency, f.KeyConcurrency = optInt(l.Concurrency), optInt(l.KeyConcurrency)
	f.RateLimit, f.RatePeriodMS, f.RateBurst = rateFields(l.Rate)
	f.KeyRateLimit, f.KeyRatePeriodMS, f.KeyRateBurst = rateFields(l.KeyRate)
	return f
}

func optInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

func rateFields(r *store.Rate) (limit, periodMS, burst string) {
	if r == nil {
		return "", "", ""
	}
	return strconv.Itoa(r.Limit), strconv.FormatInt(r.Period.Milliseconds(), 10), strconv.Itoa(r.Burst)
}

// limitsSummary words a queue's limits for the queues table; "" for none.
func limitsSummary(l *store.Limits) string {
	if l.None() {
		return ""
	}
	var parts []string
	if l.Concurrency != nil {
		parts = append(parts, fmt.Sprintf("≤ %s running", number(int64(*l.Concurrency))))
	}
	if l.Rate != nil {
		parts = append(parts, rateSummary(l.Rate))
	}
	if l.KeyConcurrency != nil {
		parts = append(parts, fmt.Sprintf("≤ %s running per key", number(int64(*l.KeyConcurrency))))
	}
	if l.KeyRate != nil {
		parts = append(parts, rateSummary(l.KeyRate)+" per key")
	}
	return strings.Join(parts, ", ")
}

func rateSummary(r *store.Rate) string {
	s := fmt.Sprintf("%s per %s", number(int64(r.Limit)), span(r.Period))
	if r.Burst > 0 {
		s += fmt.Sprintf(" (+%s)", number(int64(r.Burst)))
	}
	return s
}

// throttledSummary words how many leases each limit held back; "" for
// none.
func throttledSummary(t map[store.ThrottleReason]int64) string {
	var parts []string
	for _, r := range store.ThrottleReasons {
		if n := t[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", strings.ReplaceAll(string(r), "_", " "), number(n)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "held back: " + strings.Join(parts, ", ")
}

// parse reads the posted form into limits, with the API's ranges; a
// field out of range is bad input naming it. All fields empty is none.
func (f limitsForm) parse() (*store.Limits, error) {
	l := &store.Limits{}
	var err error
	if l.Concurrency, err = formInt("concurrency", f.Concurrency, 1, store.MaxConcurrency); err != nil {
		return nil, err
	}
	if l.KeyConcurrency, err = formInt("key concurrency", f.KeyConcurrency, 1, store.MaxConcurrency); err != nil {
		return nil, err
	}
	if l.Rate, err = formRate("rate", f.RateLimit, f.RatePeriodMS, f.RateBurst); err != nil {
		return nil, err
	}
	if l.KeyRate, err = formRate("key rate", f.KeyRateLimit, f.KeyRatePeriodMS, f.KeyRateBurst); err != nil {
		return nil, err
	}
	return l, nil
}

func formInt(field, v string, lo, hi int) (*int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return nil, &badInput{msg: fmt.Sprintf("%s %q must be a whole number in %d..%d, or empty for no limit", field, v, lo, hi)}
	}
	return &n, nil
}

// formRate reads a rate: limit and period both set, or both empty (and
// the burst with them) for none.
func formRate(field, limit, periodMS, burst string) (*store.Rate, error) {
	if strings.TrimSpace(limit) == "" && strings.TrimSpace(periodMS) == "" && strings.TrimSpace(burst) == "" {
		return nil, nil
	}
	n, err := formInt(field+" limit", limit, 1, store.MaxRateLimit)
	if err == nil && n == nil {
		err = &badInput{msg: field + " limit is required with a period"}
	}
	if err != nil {
		return nil, err
	}
	p, err := formInt(field+" period (ms)", periodMS, 1, int(store.MaxRatePeriod.Milliseconds()))
	if err == nil && p == nil {
		err = &badInput{msg: field + " period (ms) is required with a limit"}
	}
	if err != nil {
		return nil, err
	}
	b, err := formInt(field+" burst", burst, 0, store.MaxRateBurst)
	if err != nil {
		return nil, err
	}
	r := &store.Rate{Limit: *n, Period: time.Duration(*p) * time.Millisecond}
	if b != nil {
		r.Burst = *b
	}
	return r, nil
}

// setLimits is the queue page's limits form (POST /queues/{name}/limits):
// the same store call as PUT /v1/queues/{name}/limits; all fields empty
// clears the limits.
func (d *dash) setLimits(w http.ResponseWriter, r *http.Request) {
	name := param(r, "name")
	f := limitsForm{
		Concurrency: r.PostFormValue("concurrency"), KeyConcurrency: r.PostFormValue("key_concurrency"),
		RateLimit: r.PostFormValue("rate_limit"), RatePeriodMS: r.PostFormValue("rate_period_ms"),
		RateBurst: r.PostFormValue("rate_burst"), KeyRateLimit: r.PostFormValue("key_rate_limit"),
		KeyRatePeriodMS: r.PostFormValue("key_rate_period_ms"), KeyRateBurst: r.PostFormValue("key_rate_burst"),
	}
	l, err := f.parse()
	if err == nil {
		err = checkName("queue", name, false)
	}
	if err != nil {
		d.refuse(w, r, err)
		return
	}
	_, err = d.store.QueueSetLimits(r.Context(), &store.QueueSetLimitsParams{Name: name, Limits: l, Now: d.now()})
	msg := fmt.Sprintf("Limits of queue %s saved.", name)
	if l.None() {
		msg = fmt.Sprintf("Queue %s has no limits now.", name)
	}
	d.done(w, r, "/queues", err, msg, "queue "+name)
}
