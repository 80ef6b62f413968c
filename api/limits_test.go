package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// PUT /v1/queues/{name}/limits sets the limits whole and the queue view
// shows them, in the answer and in GET /v1/queues; the next lease holds to
// them and leaves the job held back untouched; DELETE clears them.
func TestQueueLimits(t *testing.T) {
	t.Parallel()
	e := setup(t)
	type rate struct {
		Limit    int   `json:"limit"`
		PeriodMS int64 `json:"period_ms"`
		Burst    int   `json:"burst"`
	}
	type limits struct {
		Concurrency    *int  `json:"concurrency"`
		Rate           *rate `json:"rate"`
		KeyConcurrency *int  `json:"key_concurrency"`
		KeyRate        *rate `json:"key_rate"`
	}
	type queue struct {
		Name    string  `json:"name"`
		Running int     `json:"running"`
		Limits  *limits `json:"limits"`
	}
	var q queue
	e.do("PUT", "/v1/queues/q/limits", `{"concurrency":1,"rate":{"limit":5,"period_ms":1000},"key_concurrency":null,
		"key_rate":{"limit":2,"period_ms":60000,"burst":3}}`).want(http.StatusOK).into(&q)
	if q.Limits == nil || *q.Limits.Concurrency != 1 || *q.Limits.Rate != (rate{5, 1000, 0}) ||
		q.Limits.KeyConcurrency != nil || *q.Limits.KeyRate != (rate{2, 60000, 3}) {
		t.Fatalf("PUT answered limits %+v", q.Limits)
	}
	var list struct{ Queues []queue }
	e.do("GET", "/v1/queues", nil).want(http.StatusOK).into(&list)
	if len(list.Queues) != 1 || list.Queues[0].Limits == nil || *list.Queues[0].Limits.Concurrency != 1 {
		t.Fatalf("GET /v1/queues: %+v", list.Queues)
	}

	e.do("POST", "/v1/jobs", `{"kind":"k","queue":"q"}`).want(http.StatusCreated)
	held := e.do("POST", "/v1/jobs", `{"kind":"k","queue":"q"}`).want(http.StatusCreated).job()
	var leased struct{ Jobs []job }
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"],"max":10}`).want(http.StatusOK).into(&leased)
	if len(leased.Jobs) != 1 {
		t.Fatalf("leased %d under a cap of 1", len(leased.Jobs))
	}
	var got struct {
		State   string `json:"state"`
		Attempt int    `json:"attempt"`
	}
	e.do("GET", "/v1/jobs/"+held.ID, nil).want(http.StatusOK).into(&got)
	if got.State != "available" || got.Attempt != 0 {
		t.Errorf("held-back job: %+v, want available, attempt 0", got)
	}
	body := string(e.do("GET", "/metrics", nil).want(http.StatusOK).Body)
	if !strings.Contains(body, `tether_lease_throttled_total{queue="q",reason="concurrency"} 1`) {
		t.Errorf("/metrics lacks the throttled lease:\n%s", grepLines(body, "tether_lease_throttled_total"))
	}

	e.do("DELETE", "/v1/queues/q/limits", nil).want(http.StatusOK).into(&q)
	if q.Limits != nil {
		t.Errorf("DELETE answered limits %+v", q.Limits)
	}
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"],"max":10}`).want(http.StatusOK).into(&leased)
	if len(leased.Jobs) != 1 {
		t.Errorf("leased %d after the limits were cleared, want 1", len(leased.Jobs))
	}
	e.do("DELETE", "/v1/queues/nowhere/limits", nil).want(http.StatusNotFound)
}

// Bad limits are a 400 naming the field, and change nothing.
func TestQueueLimitsRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.do("PUT", "/v1/queues/q/limits", `{"concurrency":2}`).want(http.StatusOK)
	for body, field := range map[string]string{
		`{"concurrency":0}`:                                 "concurrency",
		`{"concurrency":100001}`:                            "concurrency",
		`{"key_concurrency":-1}`:                            "key_concurrency",
		`{"rate":{"period_ms":1000}}`:                       "rate.limit",
		`{"rate":{"limit":1000001,"period_ms":1000}}`:       "rate.limit",
		`{"rate":{"limit":1}}`:                              "rate.period_ms",
		`{"key_rate":{"limit":1,"period_ms":86400001}}`:     "key_rate.period_ms",
		`{"key_rate":{"limit":1,"period_ms":1,"burst":-1}}`: "key_rate.burst",
		`{"concurrency":"2"}`:                               "concurrency",
		`{"concurency":2}`:                                  "concurency",
	} {
		e.do("PUT", "/v1/queues/q/limits", body).field(field)
	}
	e.do("PUT", "/v1/queues/bad%20name/limits", `{"concurrency":1}`).field("name")
	var list struct {
		Queues []struct {
			Name   string `json:"name"`
			Limits *struct {
				Concurrency *int `json:"concurrency"`
			} `json:"limits"`
		}
	}
	e.do("GET", "/v1/queues", nil).want(http.StatusOK).into(&list)
	if len(list.Queues) != 1 || list.Queues[0].Limits == nil || *list.Queues[0].Limits.Concurrency != 2 {
		t.Errorf("after refused changes: %+v, want q with concurrency 2 only", list.Queues)
	}
}

// grepLines returns the lines of s that hold sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
