package api_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
)

func decodeFile(t *testing.T, text string) []store.ScheduleSpec {
	t.Helper()
	specs, err := api.DecodeScheduleFile(strings.NewReader(text))
	if err != nil {
		t.Fatalf("DecodeScheduleFile: %v", err)
	}
	return specs
}

func TestDecodeScheduleFile(t *testing.T) {
	t.Parallel()
	specs := decodeFile(t, `{"schedules": [
		{"name": "nightly", "cron": "0 2 * * *", "timezone": "Europe/Paris", "job": {"kind": "report"}},
		{"name": "tick", "every_ms": 60000, "catchup": "all", "job": {"kind": "k", "queue": "q"}}]}`)
	if len(specs) != 2 || specs[0].Name != "nightly" || specs[0].Timezone != "Europe/Paris" ||
		specs[1].Every != time.Minute || specs[1].Catchup != store.CatchupAll || specs[1].Job.Queue != "q" ||
		specs[0].Job.Queue != "default" || specs[0].Catchup != store.CatchupLatest {
		t.Errorf("specs %+v", specs)
	}
	if got := decodeFile(t, `{"schedules": []}`); len(got) != 0 {
		t.Errorf("empty file: %+v", got)
	}
	// Each error names the field, with the entry's index.
	ok := `{"name": "a", "every_ms": 1000, "job": {"kind": "k"}}`
	for text, field := range map[string]string{
		`{"schedule": []}`: "schedule",
		`{"schedules": [{"name": "a", "every_ms": 1000, "job": {"kind": "k"}, "colour": 1}]}`:              "schedules[0].colour",
		`{"schedules": [` + ok + `, {"every_ms": 1000, "job": {"kind": "k"}}]}`:                            "schedules[1].name",
		`{"schedules": [` + ok + `, {"name": "b", "cron": "61 * * * *", "job": {"kind": "k"}}]}`:           "schedules[1].cron",
		`{"schedules": [` + ok + `, ` + ok + `]}`:                                                          "schedules[1].name",
		`{"schedules": [{"name": "a b", "every_ms": 1000, "job": {"kind": "k"}}]}`:                         "schedules[0].name",
		`{"schedules": [{"name": "preview", "every_ms": 1000, "job": {"kind": "k"}}]}`:                     "schedules[0].name",
		`{"schedules": [{"name": "a", "every_ms": 1000, "job": {"kind": "k", "delay_ms": 5}}]}`:            "schedules[0].job.delay_ms",
		`{"schedules": [{"name": "a", "cron": "* * * * *", "timezone": "Nowhere", "job": {"kind": "k"}}]}`: "schedules[0].timezone",
	} {
		_, err := api.DecodeScheduleFile(strings.NewReader(text))
		if err == nil || !strings.HasPrefix(err.Error(), field+" ") {
			t.Errorf("%s: error %v, want one naming %s", text, err, field)
		}
	}
	if _, err := api.DecodeScheduleFile(strings.NewReader(`{"schedules": [`)); err == nil {
		t.Error("a truncated file decoded")
	}
}

// Ten replicas applying the same file at once write each schedule once;
// applying it again writes nothing.
func TestApplyScheduleFileWritesOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	specs := decodeFile(t, `{"schedules": [
		{"name": "a", "every_ms": 60000, "job": {"kind": "k", "payload": {"x": [1, 2]}, "tags": ["t"]}},
		{"name": "b", "cron": "0 2 * * *", "timezone": "America/New_York", "job": {"kind": "k", "metadata": {"m": "v"}}}]}`)
	var mu sync.Mutex
	written := map[string]int{}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			res, err := api.ApplyScheduleFile(t.Context(), e.store, specs, t0)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, name := range res.Written {
				written[name]++
			}
		})
	}
	wg.Wait()
	if written["a"] != 1 || written["b"] != 1 || len(written) != 2 {
		t.Errorf("writes by name %v, want one each of a and b", written)
	}
	res, err := api.ApplyScheduleFile(t.Context(), e.store, specs, t0.Add(time.Hour))
	if err != nil || len(res.Written)+len(res.Paused) != 0 {
		t.Errorf("second apply: %+v, %v", res, err)
	}
	for _, name := range []string{"a", "b"} {
		if s := e.do("GET", "/v1/schedules/"+name, nil).schedule(); s.Version != 1 || s.Source != "file" {
			t.Errorf("%s: %+v", name, s)
		}
	}
}

// A schedule dropped from the file is paused, never deleted, once
// however often the file is applied; put back, it is resumed. A changed
// spec is written; an API schedule of a file name becomes the file's.
func TestApplyScheduleFileDropsAndRestores(t *testing.T) {
	t.Parallel()
	e := setup(t)
	both := decodeFile(t, `{"schedules": [{"name": "a", "every_ms": 60000, "job": {"kind": "k"}},
		{"name": "b", "every_ms": 60000, "job": {"kind": "k", "payload": {"n": 1}, "metadata": {"m": 1}}}]}`)
	e.do("PUT", "/v1/schedules/api-only", `{"every_ms":1000,"job":{"kind":"k"}}`).want(201)
	if _, err := api.ApplyScheduleFile(t.Context(), e.store, both, t0); err != nil {
		t.Fatal(err)
	}
	paused := 0
	for range 3 {
		res, err := api.ApplyScheduleFile(t.Context(), e.store, both[:1], t0)
		if err != nil {
			t.Fatal(err)
		}
		if paused += len(res.Paused); len(res.Written) != 0 {
			t.Errorf("apply without b wrote %v", res.Written)
		}
	}
	if paused != 1 {
		t.Errorf("three applies without b paused it %d times, want 1", paused)
	}
	b := e.do("GET", "/v1/schedules/b", nil).want(200).schedule()
	if !b.Paused || b.Version != 2 || b.Source != "file" {
		t.Errorf("b dropped from the file: %+v, want paused at version 2", b)
	}
	if s := e.do("GET", "/v1/schedules/api-only", nil).want(200).schedule(); s.Paused || s.Version != 1 {
		t.Errorf("an API schedule changed by the file: %+v", s)
	}
	res, err := api.ApplyScheduleFile(t.Context(), e.store, both, t0)
	if err != nil || len(res.Written) != 1 || res.Written[0] != "b" {
		t.Errorf("b put back: %+v, %v", res, err)
	}
	if b := e.do("GET", "/v1/schedules/b", nil).want(200).schedule(); b.Paused || b.Version != 3 {
		t.Errorf("b put back: %+v, want resumed at version 3", b)
	}
	changed := decodeFile(t, `{"schedules": [{"name": "a", "every_ms": 120000, "job": {"kind": "k"}},
		{"name": "api-only", "every_ms": 1000, "job": {"kind": "k"}}]}`)
	res, err = api.ApplyScheduleFile(t.Context(), e.store, changed, t0)
	if err != nil || strings.Join(res.Written, ",") != "a,api-only" || strings.Join(res.Paused, ",") != "b" {
		t.Errorf("changed file: %+v, %v", res, err)
	}
	if s := e.do("GET", "/v1/schedules/api-only", nil).want(200).schedule(); s.Source != "file" {
		t.Errorf("api-only named by the file: %+v", s)
	}
}
