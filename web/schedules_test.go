package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// putSchedule creates a schedule in the store, as the API or the file.
func (e *env) putSchedule(spec store.ScheduleSpec, source store.ScheduleSource) {
	e.t.Helper()
	spec.Normalize()
	if _, err := e.store.ScheduleUpsert(e.t.Context(), &store.ScheduleUpsertParams{Spec: spec, Source: source, Now: e.clock.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) schedule(name string) (*store.Schedule, error) {
	return e.store.ScheduleGet(e.t.Context(), &store.ScheduleGetParams{Name: name})
}

func TestSchedulePages(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if code, body := e.get("/schedules"); code != 200 || !strings.Contains(body, "No schedules yet") ||
		!strings.Contains(body, "/v1/schedules/nightly-report") {
		t.Errorf("empty /schedules: %d\n%s", code, body)
	}
	e.putSchedule(store.ScheduleSpec{Name: "nightly", Cron: "0 2 * * *", Timezone: "America/New_York",
		Job: store.ScheduleJob{Kind: "report", Queue: "reports", Payload: []byte(`{"period":"day"}`)}}, store.SourceAPI)
	e.putSchedule(store.ScheduleSpec{Name: "tick", Every: time.Minute, Catchup: store.CatchupNone,
		Overlap: store.OverlapSkip, Paused: true, Job: store.ScheduleJob{Kind: "k"}}, store.SourceFile)
	j, err := e.store.ScheduleTrigger(t.Context(), &store.ScheduleTriggerParams{Name: "nightly", Now: e.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}

	code, body := e.get("/schedules")
	for _, want := range []string{
		`data-schedule="nightly"`, "at 02:00 every day", "America/New_York", "catch-up latest, overlap allow",
		`href="/jobs/` + j.ID + `"`, "badge-available", // the last fire's job and its state
		`data-schedule="tick"`, "every minute", "every_ms 60000", "catch-up none, overlap skip", "badge-file",
		`action="/schedules/tick/resume"`, `action="/schedules/nightly/pause"`, `action="/schedules/nightly/trigger"`,
		`href="/schedules"`, // the nav
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/schedules (%d) lacks %q", code, want)
		}
	}
	if strings.Index(body, `data-schedule="nightly"`) > strings.Index(body, `data-schedule="tick"`) {
		t.Error("/schedules is not by name")
	}

	code, body = e.get("/schedules/nightly")
	// The clock is 2026-01-02T03:04Z (storetest.Base), 22:04 on the 1st in
	// New York: the next fires are at 02:00 EST, 07:00Z, from the 2nd on.
	for _, want := range []string{"at 02:00 every day", "(0 2 * * *)", "report", "reports", "&#34;period&#34;: &#34;day&#34;",
		`<time datetime="2026-01-02T07:00:00.000Z" title="2026-01-02T07:00:00.000Z">Fri 2026-01-02 02:00:00 EST</time>`,
		`<time datetime="2026-01-11T07:00:00.000Z" title="2026-01-11T07:00:00.000Z">Sun 2026-01-11 02:00:00 EST</time>`,
		`href="/jobs/` + j.ID + `"`, `action="/schedules/nightly/delete"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/schedules/nightly (%d) lacks %q", code, want)
		}
	}
	if n := strings.Count(body, "<li><time datetime="); n != 10 {
		t.Errorf("/schedules/nightly shows %d next fires, want 10", n)
	}
	if _, body := e.get("/schedules/tick"); strings.Contains(body, "/schedules/tick/delete") ||
		!strings.Contains(body, "from the schedules file") {
		t.Error("a file schedule's page offers delete, or does not say where it comes from")
	}
	if code, _ := e.get("/schedules/none"); code != 404 {
		t.Errorf("/schedules/none: %d, want 404", code)
	}
	if code, body := e.get("/schedules/nightly?fragment=schedule"); code != 200 || strings.Contains(body, "<html") {
		t.Errorf("the live fragment: %d", code)
	}
}

func TestScheduleActions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.putSchedule(store.ScheduleSpec{Name: "s", Every: time.Hour, Job: store.ScheduleJob{Kind: "k"}}, store.SourceAPI)
	e.putSchedule(store.ScheduleSpec{Name: "f", Every: time.Hour, Job: store.ScheduleJob{Kind: "k"}}, store.SourceFile)
	tests := []struct {
		path, back, where, flash string
		check                    func() bool
	}{
		{"/schedules/s/pause", "/schedules", "/schedules", "Paused schedule s.", func() bool {
			s, _ := e.schedule("s")
			return s.Paused
		}},
		{"/schedules/s/resume", "/schedules/s", "/schedules/s", "Resumed schedule s", func() bool {
			s, _ := e.schedule("s")
			return !s.Paused
		}},
		{"/schedules/s/trigger", "", "/schedules/s", "Schedule s enqueued job", func() bool {
			s, _ := e.schedule("s")
			return s.FiresTotal == 1 && s.LastJobID != nil
		}},
		{"/schedules/f/delete", "/schedules/f", "/schedules/f", "comes from the schedules file", func() bool {
			_, err := e.schedule("f")
			return err == nil
		}},
		{"/schedules/s/delete", "/schedules/s", "/schedules", "Deleted schedule s", func() bool {
			_, err := e.schedule("s")
			return err != nil
		}},
		{"/schedules/s/pause", "/schedules", "/schedules", "schedule s does not exist", func() bool { return true }},
	}
	for _, tt := range tests {
		rec := e.post(tt.path, url.Values{"back": {tt.back}})
		loc, page := e.follow(rec)
		if rec.Code != 303 || loc != tt.where || !strings.Contains(page, tt.flash) || !tt.check() {
			t.Errorf("POST %s: %d to %q, flash %q shown %v, check %v", tt.path, rec.Code, loc, tt.flash,
				strings.Contains(page, tt.flash), tt.check())
		}
	}
	if rec := e.post("/schedules/a%20b/pause", nil); rec.Code != 400 {
		t.Errorf("a bad name: %d, want 400", rec.Code)
	}
	if rec := e.post("/schedules/f/pause", nil, "Sec-Fetch-Site", "cross-site"); rec.Code != 403 {
		t.Errorf("a cross-site pause: %d, want 403", rec.Code)
	}
	if s, _ := e.schedule("f"); s.Paused {
		t.Error("the cross-site pause was done")
	}
}
