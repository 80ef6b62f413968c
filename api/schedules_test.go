package api_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// schedule is the parts of a wire schedule the tests read.
type schedule struct {
	Name       string  `json:"name"`
	Cron       *string `json:"cron"`
	EveryMS    *int64  `json:"every_ms"`
	Timezone   string  `json:"timezone"`
	Catchup    string  `json:"catchup"`
	Overlap    string  `json:"overlap"`
	Paused     bool    `json:"paused"`
	Source     string  `json:"source"`
	NextFireAt string  `json:"next_fire_at"`
	FiresTotal int64   `json:"fires_total"`
	Version    int64   `json:"version"`
	LastJobID  *string `json:"last_job_id"`
	Job        struct {
		Kind     string `json:"kind"`
		Queue    string `json:"queue"`
		Priority int    `json:"priority"`
	} `json:"job"`
}

func (r *response) schedule() schedule {
	r.t.Helper()
	var s schedule
	r.into(&s)
	return s
}

func TestSchedulePutGetList(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := `{"cron":"0 2 * * *","timezone":"America/New_York","job":{"kind":"report","priority":3}}`
	s := e.do("PUT", "/v1/schedules/nightly", body).want(http.StatusCreated).schedule()
	if s.Name != "nightly" || *s.Cron != "0 2 * * *" || s.EveryMS != nil || s.Timezone != "America/New_York" ||
		s.Catchup != "latest" || s.Overlap != "allow" || s.Source != "api" || s.Version != 1 ||
		s.Job.Kind != "report" || s.Job.Queue != "default" || s.Job.Priority != 3 {
		t.Errorf("created %+v", s)
	}
	// t0 is 2030-01-02 03:04 UTC, 22:04 on the 1st in New York: next is
	// 02:00 EST on the 2nd, 07:00Z.
	if s.NextFireAt != "2030-01-02T07:00:00.000Z" {
		t.Errorf("next_fire_at %s", s.NextFireAt)
	}
	again := e.do("PUT", "/v1/schedules/nightly", `{"every_ms":60000,"job":{"kind":"report"}}`).want(http.StatusOK).schedule()
	if again.Version != 2 || again.Cron != nil || *again.EveryMS != 60000 || again.Timezone != "UTC" {
		t.Errorf("replaced %+v", again)
	}
	if got := e.do("GET", "/v1/schedules/nightly", nil).want(http.StatusOK).schedule(); got.Version != 2 {
		t.Errorf("get: %+v", got)
	}
	e.do("PUT", "/v1/schedules/a", `{"every_ms":1000,"job":{"kind":"k"}}`).want(http.StatusCreated)
	var list struct{ Schedules []schedule }
	e.do("GET", "/v1/schedules", nil).want(http.StatusOK).into(&list)
	if len(list.Schedules) != 2 || list.Schedules[0].Name != "a" || list.Schedules[1].Name != "nightly" {
		t.Errorf("list %+v", list.Schedules)
	}
	e.do("GET", "/v1/schedules/none", nil).problem(http.StatusNotFound, "not_found")
}

// A bad spec is a 400 naming its field, and changes nothing.
func TestSchedulePutInvalid(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct{ body, field string }{
		{`{"job":{"kind":"k"}}`, "cron"},
		{`{"cron":"* * *","job":{"kind":"k"}}`, "cron"},
		{`{"cron":"0 0 30 2 *","job":{"kind":"k"}}`, "cron"},
		{`{"cron":"* * * * *","every_ms":1000,"job":{"kind":"k"}}`, "every_ms"},
		{`{"every_ms":999,"job":{"kind":"k"}}`, "every_ms"},
		{`{"every_ms":31536000001,"job":{"kind":"k"}}`, "every_ms"},
		{`{"cron":"* * * * *","timezone":"Mars/Base","job":{"kind":"k"}}`, "timezone"},
		{`{"cron":"* * * * *"}`, "job"},
		{`{"cron":"* * * * *","job":{}}`, "job.kind"},
		{`{"cron":"* * * * *","job":{"kind":"a b"}}`, "job.kind"},
		{`{"cron":"* * * * *","job":{"kind":"k","run_at":"2030-01-01T00:00:00Z"}}`, "job.run_at"},
		{`{"cron":"* * * * *","job":{"kind":"k","priority":1001}}`, "job.priority"},
		{`{"cron":"* * * * *","job":{"kind":"k","backoff":{"base_ms":0}}}`, "job.backoff.base_ms"},
		{`{"cron":"* * * * *","job":{"kind":"k"},"catchup":"some"}`, "catchup"},
		{`{"cron":"* * * * *","job":{"kind":"k"},"overlap":"never"}`, "overlap"},
		{`{"cron":"* * * * *","job":{"kind":"k"},"max_catchup":0}`, "max_catchup"},
		{`{"cron":"* * * * *","job":{"kind":"k"},"catchup_window_ms":0}`, "catchup_window_ms"},
		{`{"cron":"* * * * *","job":{"kind":"k"},"jitter_ms":-1}`, "jitter_ms"},
		{`{"cron":"* * * * *","job":{"kind":"k"},"name":"other"}`, "name"},
		{`{"cron":"* * * * *","job":{"kind":"k"},"colour":"red"}`, "colour"},
		{`{"cron":"* * * * *","job":{"kind":"k","concurrency_key":""}}`, "job.concurrency_key"},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			e.do("PUT", "/v1/schedules/s", tc.body).field(tc.field)
		})
	}
	e.do("PUT", "/v1/schedules/a%20b", `{"every_ms":1000,"job":{"kind":"k"}}`).field("name")
	// "preview" is the preview route's: openapi.yaml has no PUT there, so
	// this one request goes to the handler unchecked.
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, httptest.NewRequest("PUT", "/v1/schedules/preview", strings.NewReader(`{"every_ms":1000,"job":{"kind":"k"}}`)))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"name"`) {
		t.Errorf("PUT /v1/schedules/preview: %d %s", rec.Code, rec.Body)
	}
	if list, _ := e.store.ScheduleList(t.Context(), &store.ScheduleListParams{}); len(list) != 0 {
		t.Errorf("%d schedules after bad specs", len(list))
	}
}

func TestScheduleActions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.do("PUT", "/v1/schedules/s", `{"every_ms":3600000,"overlap":"skip","job":{"kind":"k","queue":"q","concurrency_key":"tenant-1"}}`).want(http.StatusCreated)
	p := e.do("POST", "/v1/schedules/s/pause", nil).want(http.StatusOK).schedule()
	if !p.Paused || p.Version != 2 {
		t.Errorf("pause: %+v", p)
	}
	e.clock.Advance(90 * time.Minute)
	r := e.do("POST", "/v1/schedules/s/resume", nil).want(http.StatusOK).schedule()
	if r.Paused || r.NextFireAt != "2030-01-02T05:00:00.000Z" {
		t.Errorf("resume: %+v, want next fire 05:00 (recomputed from now, 04:34)", r)
	}
	res := e.do("POST", "/v1/schedules/s/trigger", nil).want(http.StatusCreated)
	j := res.object()
	if j["schedule"] != "s" || j["scheduled_for"] != ms(e.clock.Now()) || j["queue"] != "q" || j["trace"] != nil ||
		j["concurrency_key"] != "tenant-1" {
		t.Errorf("triggered job %v", j)
	}
	var list struct{ Jobs []job }
	e.do("GET", "/v1/jobs?schedule=s", nil).want(http.StatusOK).into(&list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != j["id"] {
		t.Errorf("jobs of s: %+v", list.Jobs)
	}
	e.do("GET", "/v1/jobs?schedule=a%20b", nil).field("schedule")
	if got := e.do("GET", "/v1/schedules/s", nil).want(http.StatusOK).schedule(); got.FiresTotal != 1 || *got.LastJobID != j["id"] {
		t.Errorf("after trigger: %+v", got)
	}
	e.do("DELETE", "/v1/schedules/s", nil).want(http.StatusNoContent)
	e.do("GET", "/v1/schedules/s", nil).problem(http.StatusNotFound, "not_found")
	e.do("GET", "/v1/jobs/"+j["id"].(string), nil).want(http.StatusOK) // its job stays
	for _, path := range []string{"/pause", "/resume", "/trigger"} {
		e.do("POST", "/v1/schedules/s"+path, nil).problem(http.StatusNotFound, "not_found")
	}
	e.do("DELETE", "/v1/schedules/s", nil).problem(http.StatusNotFound, "not_found")
}

// A schedule from the file cannot be replaced or deleted over the API.
func TestScheduleFileIsReadOnly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	spec := store.ScheduleSpec{Name: "f", Every: time.Minute, Job: store.ScheduleJob{Kind: "k"}}
	spec.Normalize()
	if _, err := e.store.ScheduleUpsert(t.Context(), &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceFile, Now: t0}); err != nil {
		t.Fatal(err)
	}
	p := e.do("PUT", "/v1/schedules/f", `{"every_ms":1000,"job":{"kind":"k"}}`).problem(http.StatusConflict, "invalid_state")
	if !strings.Contains(p["detail"].(string), "schedules file") {
		t.Errorf("detail %v", p["detail"])
	}
	e.do("DELETE", "/v1/schedules/f", nil).problem(http.StatusConflict, "invalid_state")
	if s := e.do("GET", "/v1/schedules/f", nil).want(http.StatusOK).schedule(); s.Source != "file" || s.Version != 1 {
		t.Errorf("file schedule after refused writes: %+v", s)
	}
	e.do("POST", "/v1/schedules/f/trigger", nil).want(http.StatusCreated)
}

// Reads are open to every role; writes need admin.
func TestScheduleRoles(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens)
	body := `{"every_ms":60000,"job":{"kind":"k"}}`
	e.do("PUT", "/v1/schedules/s", body, bearer("adm")...).want(http.StatusCreated)
	for _, tok := range []string{"prod", "work"} {
		e.do("GET", "/v1/schedules", nil, bearer(tok)...).want(http.StatusOK)
		e.do("GET", "/v1/schedules/s", nil, bearer(tok)...).want(http.StatusOK)
		e.do("GET", "/v1/schedules/preview?every_ms=1000", nil, bearer(tok)...).want(http.StatusOK)
		e.do("PUT", "/v1/schedules/s", body, bearer(tok)...).problem(http.StatusForbidden, "forbidden")
		e.do("DELETE", "/v1/schedules/s", nil, bearer(tok)...).problem(http.StatusForbidden, "forbidden")
		for _, a := range []string{"pause", "resume", "trigger"} {
			e.do("POST", "/v1/schedules/s/"+a, nil, bearer(tok)...).problem(http.StatusForbidden, "forbidden")
		}
	}
	e.do("GET", "/v1/schedules", nil).problem(http.StatusUnauthorized, "unauthorized")
}

// The preview of the contract's DST example, and the fall-back hour firing
// once.
func TestSchedulePreview(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var got struct{ Times []string }
	e.do("GET", "/v1/schedules/preview?cron=30+2+*+*+*&timezone=America/New_York&from=2026-03-07T00:00:00Z&count=3", nil).
		want(http.StatusOK).into(&got)
	if want := []string{"2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"}; !slices.Equal(got.Times, want) {
		t.Errorf("spring: %v, want %v", got.Times, want)
	}
	e.do("GET", "/v1/schedules/preview?cron=30+1+*+*+*&timezone=America/New_York&from=2026-10-31T12:00:00Z&count=2", nil).
		want(http.StatusOK).into(&got)
	if want := []string{"2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"}; !slices.Equal(got.Times, want) {
		t.Errorf("autumn: %v, want %v", got.Times, want)
	}
	e.do("GET", "/v1/schedules/preview?every_ms=60000&from=2030-01-01T00:00:00Z&count=2", nil).want(http.StatusOK).into(&got)
	if want := []string{"2030-01-01T00:00:00.000Z", "2030-01-01T00:01:00.000Z"}; !slices.Equal(got.Times, want) {
		t.Errorf("every: %v, want %v (from itself is a slot)", got.Times, want)
	}
	e.do("GET", "/v1/schedules/preview?cron=0+*+*+*+*", nil).want(http.StatusOK).into(&got)
	if len(got.Times) != 10 || got.Times[0] != "2030-01-02T04:00:00.000Z" {
		t.Errorf("default preview from now: %v", got.Times)
	}
	for q, field := range map[string]string{
		"":                             "cron",
		"cron=bad":                     "cron",
		"cron=*+*+*+*+*&timezone=Nope": "timezone",
		"every_ms=5":                   "every_ms",
		"every_ms=x":                   "every_ms",
		"every_ms=1000&count=0":        "count",
		"every_ms=1000&count=101":      "count",
		"every_ms=1000&from=yesterday": "from",
		"cron=*+*+*+*+*&every_ms=1000": "every_ms",
	} {
		e.do("GET", "/v1/schedules/preview?"+q, nil).field(field)
	}
}
