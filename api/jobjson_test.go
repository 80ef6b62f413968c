package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The hand-written job encoding must say exactly what encoding/json says
// of the same view: same bytes, for plain and for awkward values.
func TestAppendJobMatchesEncodingJSON(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	started, finished := now.Add(-time.Second), now.Add(time.Millisecond)
	progress, key, lastErr := 42, "uniq-1", "boom \"quoted\" <tag> & \\ \n\t\b\f\x01 é \u2028 日本"
	reason := store.DeadAttemptsExhausted
	sched, slot := "nightly <report>", now.Add(-time.Minute)
	for name, j := range map[string]*store.Job{
		"minimal": {ID: "01a2", Queue: "default", Kind: "k", State: store.StateAvailable, MaxAttempts: 20,
			Timeout: 30 * time.Minute, RunAt: now, CreatedAt: now},
		"full": {ID: "01a3", Queue: "q:1", Kind: "send.email", Payload: json.RawMessage(`{"to":"a@b.c","n":[1,2]}`),
			Priority: -7, State: store.StateDead, Attempt: 3, MaxAttempts: 3, Timeout: time.Second,
			Backoff: store.Backoff{Base: time.Second, Max: time.Hour}, RunAt: now, CreatedAt: now,
			StartedAt: &started, FinishedAt: &finished, UniqueKey: &key, Tags: []string{"a", "<b>"},
			Metadata: json.RawMessage(`{"tenant":"t1"}`), LastError: &lastErr, Result: json.RawMessage(`"ok"`),
			Progress: &progress, CancelRequested: true, Rescues: 2, DeadReason: &reason,
			Trace:          &store.Trace{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", State: "a=1, b=\"2\""},
			ConcurrencyKey: &lastErr, Schedule: &sched, ScheduledFor: &slot},
		"running": {ID: "01a4", Queue: "default", Kind: "k", State: store.StateRunning, Attempt: 1, MaxAttempts: 20,
			RunAt: now, CreatedAt: now, StartedAt: &started,
			Lease: &store.Lease{WorkerID: "10.0.0.5:8080/w-3", Token: "abc", ExpiresAt: now.Add(time.Minute)},
			Trace: &store.Trace{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		"invalid utf-8": {ID: "01a5", Queue: "default", Kind: "k\xff\xfe", State: store.StateScheduled, RunAt: now.Add(time.Hour), CreatedAt: now},
	} {
		for _, v := range []*jobView{newJobView(j, now), newLeasedJobView(j, now)} {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendJob(nil, v); !bytes.Equal(got, want) {
				t.Errorf("%s:\n got %s\nwant %s", name, got, want)
			}
		}
	}
}

// appendTime writes what AppendFormat writes in timeLayout, across the
// years, the digits of every field, sub-millisecond rests and zones.
func TestAppendTimeMatchesAppendFormat(t *testing.T) {
	east := time.FixedZone("east", 5*3600+30*60)
	times := []time.Time{
		{},
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 3, 17, 4, 9, 7_500_000, east),
		time.Unix(0, 0),
	}
	for sec := int64(-1e10); sec < 3e11; sec += 9_876_543_211 {
		for _, ns := range []int64{0, 1, 999_999, 1_000_000, 123_456_789, 999_999_999} {
			times = append(times, time.Unix(sec, ns))
		}
	}
	for _, tt := range times {
		if got, want := string(appendTime(nil, tt)), tt.UTC().Format(timeLayout); got != want {
			t.Errorf("appendTime(%v) = %s, want %s", tt, got, want)
		}
	}
}

// A lease's token is in a lease answer's view only.
func TestLeaseTokenOnlyInLeasedView(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	j := &store.Job{ID: "01a4", Queue: "default", Kind: "k", State: store.StateRunning, Attempt: 1,
		RunAt: now, CreatedAt: now, Lease: &store.Lease{WorkerID: "w-1", Token: "secret-token", ExpiresAt: now}}
	for name, v := range map[string]any{"job": viewJob(j, now), "detail": viewJobDetail(j, now), "list": viewJobs([]*store.Job{j}, now)} {
		if b, _ := json.Marshal(v); bytes.Contains(b, []byte("secret-token")) || !bytes.Contains(b, []byte(`"worker_id":"w-1"`)) {
			t.Errorf("%s view: %s", name, b)
		}
	}
	if v := newLeasedJobView(j, now); v.Lease.Token != "secret-token" {
		t.Errorf("leased view's token %q", v.Lease.Token)
	}
}

// FuzzAppendJob holds appendJob equal to encoding/json for any strings in
// a job's text fields, with and without a lease, in both views.
func FuzzAppendJob(f *testing.F) {
	f.Add("send.email", "q:1", "boom <b> & \"x\"\n", "10.0.0.5:8080/w-3", "tok\u2028", true)
	f.Add("k\xff\xfe", "default", "", "", "", false)
	f.Fuzz(func(t *testing.T, kind, queue, text, worker, token string, running bool) {
		now := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
		j := &store.Job{ID: text, Queue: queue, Kind: kind, State: store.StateAvailable, RunAt: now, CreatedAt: now,
			UniqueKey: &text, Tags: []string{text, kind}, LastError: &text, ConcurrencyKey: &queue}
		if running {
			j.State, j.Lease = store.StateRunning, &store.Lease{WorkerID: worker, Token: token, ExpiresAt: now}
			j.Trace = &store.Trace{Parent: worker, State: text}
			j.Schedule, j.ScheduledFor = &kind, &now
		}
		for _, v := range []*jobView{newJobView(j, now), newLeasedJobView(j, now)} {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendJob(nil, v); !bytes.Equal(got, want) {
				t.Fatalf("\n got %s\nwant %s", got, want)
			}
		}
	})
}

func TestWriteJobsMatchesEncodingJSON(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	jobs := []*store.Job{
		{ID: "01a2", Queue: "default", Kind: "k", State: store.StateAvailable, RunAt: now, CreatedAt: now},
		{ID: "01a3"}, // an idempotent replay of a pruned job: its id only
		{ID: "01a4", Queue: "default", Kind: "k", State: store.StateRunning, RunAt: now, CreatedAt: now,
			Lease: &store.Lease{WorkerID: "w-1", Token: "t-1", ExpiresAt: now}},
	}
	for _, view := range []func(*store.Job, time.Time) *jobView{newJobView, newLeasedJobView} {
		for _, list := range [][]*store.Job{jobs, nil} {
			rec := httptest.NewRecorder()
			writeJobs(rec, 201, list, now, view)
			out := []any{}
			for _, j := range list {
				if j.State == "" {
					out = append(out, jobRef{ID: j.ID})
				} else {
					out = append(out, view(j, now))
				}
			}
			want, _ := json.Marshal(jobsView{Jobs: out})
			if got := bytes.TrimSuffix(rec.Body.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if rec.Code != 201 || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("status %d content type %q", rec.Code, rec.Header().Get("Content-Type"))
			}
		}
	}
}

func BenchmarkWriteJobs(b *testing.B) {
	now := time.Now()
	jobs := make([]*store.Job, 100)
	for i := range jobs {
		jobs[i] = &store.Job{ID: "019ae04c-5c1e-7a42-9d0b-3f2f5e4b7a10", Queue: "default", Kind: "bench",
			Payload: json.RawMessage(`{"to":"user@example.com","template":"welcome","locale":"en","n":123456789}`),
			State:   store.StateRunning, Attempt: 1, MaxAttempts: 20, Timeout: time.Minute, RunAt: now, CreatedAt: now,
			StartedAt: &now, Tags: []string{}, Metadata: json.RawMessage(`{}`),
			Lease: &store.Lease{WorkerID: "w-1", Token: "0123456789abcdef0123456789abcdef", ExpiresAt: now}}
	}
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			writeJobs(httptest.NewRecorder(), 200, jobs, now, newLeasedJobView)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			views := make([]any, len(jobs))
			for i, j := range jobs {
				views[i] = newLeasedJobView(j, now)
			}
			writeJSON(httptest.NewRecorder(), 200, jobsView{Jobs: views})
		}
	})
}
