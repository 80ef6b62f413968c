package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const (
	traceParent  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceParent2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

// A job enqueued with traceparent and tracestate headers carries them as
// its trace, on enqueue, get, list and lease; a spec's own trace wins; a
// malformed header is ignored (W3C); a malformed spec trace is a 400
// naming the field.
func TestTraceContext(t *testing.T) {
	t.Parallel()
	e := setup(t)
	type trace struct {
		Parent string `json:"traceparent"`
		State  string `json:"tracestate"`
	}
	traceOf := func(res *response) *trace {
		var j struct{ Trace *trace }
		res.into(&j)
		return j.Trace
	}
	hdr := []string{"traceparent", traceParent, "tracestate", "congo=t61rcWkgMzE"}
	j := e.do("POST", "/v1/jobs", `{"kind":"k","queue":"t"}`, hdr...).want(http.StatusCreated)
	if got := traceOf(j); got == nil || got.Parent != traceParent || got.State != "congo=t61rcWkgMzE" {
		t.Fatalf("enqueued with trace headers: trace %+v", got)
	}
	id := j.job().ID
	if got := traceOf(e.do("GET", "/v1/jobs/"+id, nil).want(http.StatusOK)); got == nil || got.Parent != traceParent {
		t.Errorf("GET: trace %+v", got)
	}
	var leased struct {
		Jobs []struct{ Trace *trace }
	}
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["t"]}`).want(http.StatusOK).into(&leased)
	if len(leased.Jobs) != 1 || leased.Jobs[0].Trace == nil || leased.Jobs[0].Trace.Parent != traceParent {
		t.Errorf("lease: %+v", leased.Jobs)
	}

	// The spec's trace wins over the headers; batch items without one take them.
	spec := fmt.Sprintf(`{"kind":"k","trace":{"traceparent":%q}}`, traceParent2)
	if got := traceOf(e.do("POST", "/v1/jobs", spec, hdr...).want(http.StatusCreated)); got == nil || got.Parent != traceParent2 || got.State != "" {
		t.Errorf("spec trace under headers: %+v", got)
	}
	var batch struct {
		Jobs []struct{ Trace *trace }
	}
	e.do("POST", "/v1/jobs/batch", `{"jobs":[{"kind":"k"},`+spec+`]}`, hdr...).want(http.StatusCreated).into(&batch)
	if batch.Jobs[0].Trace == nil || batch.Jobs[0].Trace.Parent != traceParent || batch.Jobs[1].Trace.Parent != traceParent2 {
		t.Errorf("batch traces: %+v, %+v", batch.Jobs[0].Trace, batch.Jobs[1].Trace)
	}

	// Malformed headers are ignored; a malformed spec trace is refused.
	for _, bad := range []string{"garbage", strings.ToUpper(traceParent), "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if got := traceOf(e.do("POST", "/v1/jobs", `{"kind":"k"}`, "traceparent", bad).want(http.StatusCreated)); got != nil {
			t.Errorf("header traceparent %q: trace %+v, want none", bad, got)
		}
		e.do("POST", "/v1/jobs", fmt.Sprintf(`{"kind":"k","trace":{"traceparent":%q}}`, bad)).field("trace.traceparent")
	}
	e.do("POST", "/v1/jobs", `{"kind":"k","trace":{}}`).field("trace.traceparent")
	e.do("POST", "/v1/jobs", fmt.Sprintf(`{"kind":"k","trace":{"traceparent":%q,"tracestate":%q}}`, traceParent, strings.Repeat("x", 513))).field("trace.tracestate")
	e.do("POST", "/v1/jobs", fmt.Sprintf(`{"kind":"k","trace":{"traceparent":%q,"span":1}}`, traceParent)).field("trace.span")
	if got := traceOf(e.do("POST", "/v1/jobs", `{"kind":"k","trace":null}`).want(http.StatusCreated)); got != nil {
		t.Errorf("trace null: %+v, want none", got)
	}
}

// A job's concurrency_key is kept as given and read back on get, list and
// lease; a key out of range is a 400 naming the field, and nothing is
// enqueued.
func TestConcurrencyKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	type keyed struct {
		Key *string `json:"concurrency_key"`
	}
	key := strings.Repeat("é", 255)
	var j keyed
	res := e.do("POST", "/v1/jobs", fmt.Sprintf(`{"kind":"k","queue":"c","concurrency_key":%q}`, key)).want(http.StatusCreated)
	res.into(&j)
	id := res.job().ID
	if j.Key == nil || *j.Key != key {
		t.Fatalf("enqueued: concurrency_key %v", j.Key)
	}
	e.do("GET", "/v1/jobs/"+id, nil).want(http.StatusOK).into(&j)
	if j.Key == nil || *j.Key != key {
		t.Errorf("GET: concurrency_key %v", j.Key)
	}
	var leased struct{ Jobs []keyed }
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["c"]}`).want(http.StatusOK).into(&leased)
	if len(leased.Jobs) != 1 || leased.Jobs[0].Key == nil || *leased.Jobs[0].Key != key {
		t.Errorf("lease: %+v", leased.Jobs)
	}
	e.do("POST", "/v1/jobs", `{"kind":"k","queue":"c","concurrency_key":""}`).field("concurrency_key")
	e.do("POST", "/v1/jobs", fmt.Sprintf(`{"kind":"k","queue":"c","concurrency_key":%q}`, strings.Repeat("x", 256))).field("concurrency_key")
	e.do("POST", "/v1/jobs", `{"kind":"k","queue":"c","concurrency_key":7}`).field("concurrency_key")
	e.do("POST", "/v1/jobs/batch", `{"jobs":[{"kind":"k","queue":"c"},{"kind":"k","queue":"c","concurrency_key":""}]}`).
		field("jobs[1].concurrency_key")
	var list struct{ Jobs []keyed }
	e.do("GET", "/v1/jobs?queue=c", nil).want(http.StatusOK).into(&list)
	if len(list.Jobs) != 1 {
		t.Errorf("%d jobs in queue c after the refused ones, want 1", len(list.Jobs))
	}
}
