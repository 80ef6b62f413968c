package redis_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// TestOwnerAndTokenFields: the owner and the token are hash fields of
// their own, stored whole, and the owner's keys are named by its whole id.
func TestOwnerAndTokenFields(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	s := open(t, url, "")
	c := raw(t, url)
	ctx := t.Context()
	owner := "10.0.0.5:8080:w-3"
	jobs := leaseEach(t, s, []string{owner}, storetest.Base)
	j := jobs[owner]
	p := s.PrefixForTest()
	got, err := c.HMGet(ctx, p+"j:"+j.ID, "w", "t").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != owner || got[1] != j.Lease.Token {
		t.Errorf("job hash w, t = %q, %q; want %q and the lease token", got[0], got[1], owner)
	}
	if held, _ := c.SMembers(ctx, p+"wj:"+owner).Result(); !slices.Equal(held, []string{j.ID}) {
		t.Errorf("held set of %q = %q, want [%s]", owner, held, j.ID)
	}
	for _, k := range []string{"workers", "holders"} {
		if _, err := c.ZScore(ctx, p+k, owner).Result(); err != nil {
			t.Errorf("%q not a member of %s: %v", owner, k, err)
		}
	}
}

// TestLeaseOrderAcrossQueues: candidates of several queues merge into one
// order: priority, run_at, id.
func TestLeaseOrderAcrossQueues(t *testing.T) {
	t.Parallel()
	s := open(t, testURL(t), "")
	ctx := t.Context()
	now := storetest.Base
	res, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{
		{Kind: "k", Queue: "a", Priority: 1, RunAt: now.Add(-time.Minute)},
		{Kind: "k", Queue: "b", Priority: 5},
		{Kind: "k", Queue: "a", Priority: 5, RunAt: now.Add(-time.Second)},
		{Kind: "k", Queue: "b", Priority: 1, RunAt: now.Add(-2 * time.Minute)},
		{Kind: "k", Queue: "c", Priority: 9},
	}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Jobs
	want := []string{j[2].ID, j[1].ID, j[3].ID, j[0].ID}
	got, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"a", "b", "a"}, Max: 10, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range got {
		ids = append(ids, l.ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("lease over a and b = %q, want %q", ids, want)
	}
}

// TestListFiltersAcrossBatches: a filter that matches few jobs takes
// several list.lua batches; the page still comes out full, newest first,
// and the cursor walks on.
func TestListFiltersAcrossBatches(t *testing.T) {
	t.Parallel()
	s := open(t, testURL(t), "")
	ctx := t.Context()
	now := storetest.Base
	var rare []string
	for q := range 3 {
		specs := make([]store.JobSpec, 300)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "common", Queue: fmt.Sprintf("q%d", q)}
			if i%50 == 7 {
				specs[i].Kind = "rare"
			}
		}
		res, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range res.Jobs {
			if j.Kind == "rare" {
				rare = append(rare, j.ID)
			}
		}
	}
	slices.Sort(rare)
	slices.Reverse(rare)
	var paged []string
	for cursor := ""; ; {
		page, err := s.JobList(ctx, &store.JobListParams{Kind: "rare", State: store.StateAvailable, Limit: 4, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page {
			paged = append(paged, j.ID)
		}
		if len(page) < 4 {
			break
		}
		cursor = page[len(page)-1].ID
	}
	if !slices.Equal(paged, rare) {
		t.Errorf("rare jobs paged = %d %q\nwant %d newest first", len(paged), paged, len(rare))
	}
}

// TestPayloadPlacement: small payloads live in the job's hash, large ones
// in a key of their own; a retry may move one to the other.
func TestPayloadPlacement(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	s := open(t, url, "")
	c := raw(t, url)
	ctx := t.Context()
	now := storetest.Base
	small := []byte(`{"n":1}`)
	large := []byte(`{"text":"` + strings.Repeat("x", 500) + `"}`)
	res, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{
		{Kind: "k", Payload: small}, {Kind: "k", Payload: large}, {Kind: "k"},
	}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	key := func(id string) bool { return c.Exists(ctx, s.PrefixForTest()+"p:"+id).Val() == 1 }
	for i, want := range []struct {
		payload []byte
		ownKey  bool
	}{{small, false}, {large, true}, {nil, false}} {
		j, err := s.JobGet(ctx, &store.JobGetParams{ID: res.Jobs[i].ID})
		if err != nil {
			t.Fatal(err)
		}
		if string(j.Payload) != string(want.payload) || key(j.ID) != want.ownKey {
			t.Errorf("job %d: payload %q in its own key %v, want %q, %v", i, j.Payload, key(j.ID), want.payload, want.ownKey)
		}
	}
	// Retried with a payload of the other size, each moves.
	for i, next := range [][]byte{large, small} {
		id := res.Jobs[i].ID
		if _, err := s.JobCancel(ctx, &store.JobCancelParams{ID: id, Now: now}); err != nil {
			t.Fatal(err)
		}
		j, err := s.JobRetry(ctx, &store.JobRetryParams{ID: id, Payload: next, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.JobGet(ctx, &store.JobGetParams{ID: id})
		if string(j.Payload) != string(next) || string(got.Payload) != string(next) || key(id) != (len(next) > 48) {
			t.Errorf("retry of job %d: payload %q (read back %q), own key %v", i, j.Payload, got.Payload, key(id))
		}
	}
	// A delete leaves no key behind.
	if err := s.JobDelete(ctx, &store.JobDeleteParams{ID: res.Jobs[0].ID}); err != nil {
		t.Fatal(err)
	}
	if key(res.Jobs[0].ID) || c.Exists(ctx, s.PrefixForTest()+"j:"+res.Jobs[0].ID).Val() == 1 {
		t.Error("a deleted job left keys behind")
	}
}
