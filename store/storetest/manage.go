package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var manageTests = []test{
	{"RetryDead", testManageRetryDead},
	{"RetryCancelled", testManageRetryCancelled},
	{"RetryInvalid", testManageRetryInvalid},
	{"Run", testManageRun},
	{"RunInvalid", testManageRunInvalid},
	{"Delete", testManageDelete},
	{"List", testManageList},
}

// dead makes a dead job that was rescued once, then failed permanently.
func (h *harness) dead(queue string) *store.Job {
	h.t.Helper()
	j := h.running("w-1", spec("k", queue))
	h.recover("node-1", []store.Orphan{h.orphan(j)})
	l := h.leaseOne("w-2", j.Queue)
	got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: l.ID, Token: token(h.t, l), Error: "bad", NoRetry: true, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobFail: %v", err)
	}
	wantState(h.t, got, store.StateDead, 2, 1)
	return got
}

func (h *harness) retry(id string, payload json.RawMessage) (*store.Job, error) {
	return h.s.JobRetry(h.ctx, &store.JobRetryParams{ID: id, Payload: payload, Now: h.now()})
}

func testManageRetryDead(t *testing.T, h *harness) {
	j := h.dead("")
	h.advance(time.Minute)
	got, err := h.retry(j.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, r, store.StateAvailable, 0, 0)
		if r.DeadReason != nil {
			t.Errorf("dead_reason = %s after retry, want none", *r.DeadReason)
		}
		wantTime(t, "run_at", r.RunAt, h.now())
	}
	if n := len(h.get(j.ID).Attempts); n != 2 {
		t.Errorf("%d attempt entries after retry, want the 2 of its history", n)
	}
	if l := h.leaseOne("w-3"); l.ID != j.ID || l.Attempt != 1 {
		t.Errorf("leased %s attempt %d, want the retried job at attempt 1", l.ID, l.Attempt)
	}
}

func testManageRetryCancelled(t *testing.T, h *harness) {
	j := h.enqueueOne(store.JobSpec{Kind: "k", Payload: json.RawMessage(`{"v":1}`)})
	h.cancel(j.ID)
	got, err := h.retry(j.ID, json.RawMessage(`{"v":2}`))
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, got, store.StateAvailable, 0, 0)
	wantJSON(t, "payload after retry", h.get(j.ID).Payload, []byte(`{"v":2}`))
	// A nil payload keeps the current one.
	h.cancel(j.ID)
	if _, err := h.retry(j.ID, nil); err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "payload after a second retry", h.get(j.ID).Payload, []byte(`{"v":2}`))
}

func testManageRetryInvalid(t *testing.T, h *harness) {
	succeeded := h.running("w", spec("k", "a"))
	h.ack(succeeded)
	running := h.running("w", spec("k", "b"))
	available := h.enqueueOne(spec("k", "c"))
	scheduled := h.enqueueOne(store.JobSpec{Kind: "k", RunAt: h.now().Add(time.Hour)})
	for _, j := range []*store.Job{succeeded, running, available, scheduled} {
		before := h.get(j.ID)
		_, err := h.retry(j.ID, nil)
		wantErr(t, "retry of a "+string(before.State)+" job", err, store.ErrInvalidState)
		sameJob(t, before, h.get(j.ID))
	}
	_, err := h.retry("01950000-0000-7000-8000-000000000000", nil)
	wantErr(t, "retry of an unknown job", err, store.ErrNotFound)
}

func testManageRun(t *testing.T, h *harness) {
	j := h.running("w", store.JobSpec{Kind: "k", Backoff: store.Backoff{Base: time.Hour, Max: time.Hour}})
	h.fail(j, "boom")
	h.advance(time.Minute)
	got, err := h.s.JobRun(h.ctx, &store.JobRunParams{ID: j.ID, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, r, store.StateAvailable, 1, 0)
		wantTime(t, "run_at", r.RunAt, h.now())
	}
	if l := h.leaseOne("w"); l.ID != j.ID || l.Attempt != 2 {
		t.Errorf("leased %s attempt %d, want the run job at attempt 2", l.ID, l.Attempt)
	}
}

func testManageRunInvalid(t *testing.T, h *harness) {
	running := h.running("w", spec("k", "a"))
	available := h.enqueueOne(spec("k", "b"))
	succeeded := h.running("w", spec("k", "c"))
	h.ack(succeeded)
	for _, j := range []*store.Job{running, available, succeeded} {
		before := h.get(j.ID)
		_, err := h.s.JobRun(h.ctx, &store.JobRunParams{ID: j.ID, Now: h.now()})
		wantErr(t, "run of a "+string(before.State)+" job", err, store.ErrInvalidState)
		sameJob(t, before, h.get(j.ID))
	}
	_, err := h.s.JobRun(h.ctx, &store.JobRunParams{ID: "01950000-0000-7000-8000-000000000000", Now: h.now()})
	wantErr(t, "run of an unknown job", err, store.ErrNotFound)
}

func testManageDelete(t *testing.T, h *harness) {
	running := h.running("w", spec("k", "a"))
	err := h.s.JobDelete(h.ctx, &store.JobDeleteParams{ID: running.ID})
	wantErr(t, "delete of a running job", err, store.ErrInvalidState)
	wantState(t, h.get(running.ID), store.StateRunning, 1, 0)

	available := h.enqueueOne(spec("k", "b"))
	scheduled := h.enqueueOne(store.JobSpec{Kind: "k", Queue: "b", RunAt: h.now().Add(time.Hour)})
	dead := h.dead("c")
	for _, j := range []*store.Job{available, scheduled, dead} {
		if err := h.s.JobDelete(h.ctx, &store.JobDeleteParams{ID: j.ID}); err != nil {
			t.Errorf("delete of a %s job: %v", j.State, err)
		}
		_, err := h.s.JobGet(h.ctx, &store.JobGetParams{ID: j.ID, Now: h.now()})
		wantErr(t, "JobGet of a deleted job", err, store.ErrNotFound)
		err = h.s.JobDelete(h.ctx, &store.JobDeleteParams{ID: j.ID})
		wantErr(t, "second delete", err, store.ErrNotFound)
	}
	stats, err := h.s.StatsGet(h.ctx, &store.StatsGetParams{Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range store.States {
		if want := map[store.State]int64{store.StateRunning: 1}[s]; stats.Jobs[s] != want {
			t.Errorf("%s jobs after the deletes = %d, want %d", s, stats.Jobs[s], want)
		}
	}
}

func testManageList(t *testing.T, h *harness) {
	var all []*store.Job
	for i := range 7 {
		queue := []string{"a", "b"}[i%2]
		all = append(all, h.enqueueOne(store.JobSpec{Kind: fmt.Sprintf("k%d", i%3), Queue: queue}))
		h.advance(time.Millisecond)
	}
	h.leaseOne("w", "a") // the oldest job of a: all[0]
	list := func(p store.JobListParams) []string {
		t.Helper()
		p.Now = h.now()
		jobs, err := h.s.JobList(h.ctx, &p)
		if err != nil {
			t.Fatalf("JobList(%+v): %v", p, err)
		}
		return ids(jobs)
	}
	newestFirst := slices.Clone(ids(all))
	slices.Reverse(newestFirst)
	if got := list(store.JobListParams{Limit: 100}); !slices.Equal(got, newestFirst) {
		t.Errorf("JobList = %q\nwant newest first %q", got, newestFirst)
	}
	// Pages of 3 walk the same order, each after its cursor.
	var paged []string
	for cursor := ""; ; {
		page := list(store.JobListParams{Limit: 3, Cursor: cursor})
		if len(page) > 3 {
			t.Fatalf("a page of limit 3 has %d jobs", len(page))
		}
		paged = append(paged, page...)
		if len(page) < 3 {
			break
		}
		cursor = page[len(page)-1]
	}
	if !slices.Equal(paged, newestFirst) {
		t.Errorf("paged JobList = %q\nwant %q", paged, newestFirst)
	}
	// Filters: queue, state, kind, and all at once.
	wantSet(t, "queue b", list(store.JobListParams{Queue: "b", Limit: 100}), all[1].ID, all[3].ID, all[5].ID)
	wantSet(t, "running", list(store.JobListParams{State: store.StateRunning, Limit: 100}), all[0].ID)
	wantSet(t, "kind k1", list(store.JobListParams{Kind: "k1", Limit: 100}), all[1].ID, all[4].ID)
	wantSet(t, "queue a, available, kind k0", list(store.JobListParams{Queue: "a", State: store.StateAvailable, Kind: "k0", Limit: 100}), all[6].ID)
}
