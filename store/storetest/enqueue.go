package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var enqueueTests = []test{
	{"Single", testEnqueueSingle},
	{"Defaults", testEnqueueDefaults},
	{"Batch", testEnqueueBatch},
	{"RunAt", testEnqueueRunAt},
	{"UniqueKey", testEnqueueUniqueKey},
	{"UniqueKeyFinished", testEnqueueUniqueKeyFinished},
	{"UniqueKeyInBatch", testEnqueueUniqueKeyInBatch},
	{"IdempotencyReplay", testEnqueueIdempotencyReplay},
	{"IdempotencyReplayAfterPrune", testEnqueueIdempotencyReplayAfterPrune},
	{"IdempotencyConflict", testEnqueueIdempotencyConflict},
	{"IdempotencyExpiry", testEnqueueIdempotencyExpiry},
	{"IdempotencyCustomTTL", testEnqueueIdempotencyCustomTTL},
	{"IdempotencyAlsoKeys", testEnqueueIdempotencyAlsoKeys},
	{"IdempotencyAlsoKeysConflict", testEnqueueIdempotencyAlsoKeysConflict},
	{"IdempotencyAlsoKeysConcurrent", testEnqueueIdempotencyAlsoKeysConcurrent},
}

func testEnqueueSingle(t *testing.T, h *harness) {
	sp := store.JobSpec{
		Queue:       "mail",
		Kind:        "send_email",
		Payload:     json.RawMessage(`{"to": "a@example.com", "n": [1, 2]}`),
		Priority:    7,
		MaxAttempts: 3,
		Timeout:     90 * time.Second,
		Backoff:     store.Backoff{Base: 2 * time.Second, Max: time.Minute},
		UniqueKey:   ptr("mail-1"),
		Tags:        []string{"a", "b"},
		Metadata:    json.RawMessage(`{"tenant": "t1"}`),
	}
	res, err := h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{sp}, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 1 || len(res.Existing) != 1 || res.Existing[0] || res.Replayed {
		t.Fatalf("result: %d jobs, existing %v, replayed %v; want one new job", len(res.Jobs), res.Existing, res.Replayed)
	}
	created := res.Jobs[0]
	if !uuidV7.MatchString(created.ID) {
		t.Errorf("id %q is not a UUIDv7 string", created.ID)
	}
	// The job as enqueue returns it and as JobGet reads it back.
	for _, j := range []*store.Job{created, h.get(created.ID)} {
		if j.ID != created.ID || j.Queue != "mail" || j.Kind != "send_email" || j.Priority != 7 {
			t.Errorf("job %s: queue %q kind %q priority %d", j.ID, j.Queue, j.Kind, j.Priority)
		}
		wantState(t, j, store.StateAvailable, 0, 0)
		wantJSON(t, "payload", j.Payload, sp.Payload)
		wantJSON(t, "metadata", j.Metadata, sp.Metadata)
		if j.MaxAttempts != 3 || j.Timeout != 90*time.Second || j.Backoff != sp.Backoff {
			t.Errorf("max_attempts %d timeout %s backoff %+v", j.MaxAttempts, j.Timeout, j.Backoff)
		}
		if j.UniqueKey == nil || *j.UniqueKey != "mail-1" {
			t.Errorf("unique_key = %v, want mail-1", deref(j.UniqueKey))
		}
		if fmt.Sprint(j.Tags) != "[a b]" {
			t.Errorf("tags = %q, want [a b]", j.Tags)
		}
		wantTime(t, "run_at", j.RunAt, h.now())
		wantTime(t, "created_at", j.CreatedAt, h.now())
		if j.StartedAt != nil || j.FinishedAt != nil || j.LastError != nil || j.DeadReason != nil ||
			j.Progress != nil || j.CancelRequested || len(j.Result) != 0 {
			t.Errorf("new job has end fields set: %+v", j)
		}
	}
	if got := h.get(created.ID).Attempts; len(got) != 0 {
		t.Errorf("new job has %d attempts, want none", len(got))
	}
}

func testEnqueueDefaults(t *testing.T, h *harness) {
	j := h.get(h.enqueueOne(store.JobSpec{Kind: "k"}).ID)
	if j.Queue != store.DefaultQueue {
		t.Errorf("queue = %q, want %q", j.Queue, store.DefaultQueue)
	}
	if j.MaxAttempts != 20 || j.Timeout != 30*time.Minute || j.Priority != 0 {
		t.Errorf("max_attempts %d timeout %s priority %d, want 20 30m0s 0", j.MaxAttempts, j.Timeout, j.Priority)
	}
	if j.Backoff != (store.Backoff{Base: time.Second, Max: time.Hour}) {
		t.Errorf("backoff = %+v, want 1s/1h", j.Backoff)
	}
	if j.Tags == nil || len(j.Tags) != 0 {
		t.Errorf("tags = %#v, want an empty, non-nil slice", j.Tags)
	}
	wantJSON(t, "metadata", j.Metadata, []byte(`{}`))
	if len(j.Payload) != 0 {
		t.Errorf("payload = %s, want none", j.Payload)
	}
	if j.UniqueKey != nil {
		t.Errorf("unique_key = %q, want nil", *j.UniqueKey)
	}
	wantTime(t, "run_at", j.RunAt, h.now())
}

func testEnqueueBatch(t *testing.T, h *harness) {
	const n = 1000
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "batch", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	res, err := h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{Jobs: specs, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != n || len(res.Existing) != n {
		t.Fatalf("got %d jobs and %d existing flags, want %d", len(res.Jobs), len(res.Existing), n)
	}
	seen := make(map[string]bool, n)
	for i, j := range res.Jobs {
		if !jsonEqual(j.Payload, specs[i].Payload) {
			t.Fatalf("jobs[%d].payload = %s, want %s: order not preserved", i, j.Payload, specs[i].Payload)
		}
		if !uuidV7.MatchString(j.ID) {
			t.Fatalf("jobs[%d].id = %q, not a UUIDv7 string", i, j.ID)
		}
		if seen[j.ID] {
			t.Fatalf("jobs[%d].id = %s repeats an earlier id", i, j.ID)
		}
		seen[j.ID] = true
		if res.Existing[i] {
			t.Errorf("existing[%d] = true for a new job", i)
		}
	}
	if got := h.queue(store.DefaultQueue).Counts[store.StateAvailable]; got != n {
		t.Errorf("available = %d, want %d", got, n)
	}
}

func testEnqueueRunAt(t *testing.T, h *harness) {
	later := h.now().Add(time.Hour)
	earlier := h.now().Add(-time.Hour)
	jobs := h.enqueue(store.JobSpec{Kind: "k", RunAt: later}, store.JobSpec{Kind: "k", RunAt: earlier})
	future, past := h.get(jobs[0].ID), h.get(jobs[1].ID)
	wantState(t, future, store.StateScheduled, 0, 0)
	wantTime(t, "future run_at", future.RunAt, later)
	// A run_at in the past is kept: it orders the job earlier.
	wantState(t, past, store.StateAvailable, 0, 0)
	wantTime(t, "past run_at", past.RunAt, earlier)
}

func testEnqueueUniqueKey(t *testing.T, h *harness) {
	first := h.enqueueOne(store.JobSpec{Kind: "k", UniqueKey: ptr("u"), Payload: json.RawMessage(`1`)})
	// Every unfinished state holds the key: available, running, scheduled.
	for _, state := range []store.State{store.StateAvailable, store.StateRunning, store.StateScheduled} {
		switch state {
		case store.StateRunning:
			h.leaseOne("w")
		case store.StateScheduled:
			h.fail(h.get(first.ID), "boom")
		}
		res, err := h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{
			Jobs: []store.JobSpec{{Kind: "k", UniqueKey: ptr("u"), Payload: json.RawMessage(`2`)}},
			Now:  h.now(),
		})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Jobs[0]
		if got.ID != first.ID || !res.Existing[0] || got.State != state {
			t.Errorf("first job %s: second enqueue gave %s (%s) existing %v, want the first job", state, got.ID, got.State, res.Existing[0])
		}
		wantJSON(t, "payload of the existing job", got.Payload, []byte(`1`))
	}
	other := h.enqueueOne(store.JobSpec{Kind: "k", Queue: "other", UniqueKey: ptr("u")})
	if other.ID == first.ID {
		t.Errorf("same unique_key in another queue returned the first job")
	}
	if got := h.queue(store.DefaultQueue); got.Counts[store.StateScheduled] != 1 || got.Counts[store.StateAvailable] != 0 {
		t.Errorf("default queue counts = %v, want only the first job", got.Counts)
	}
}

func testEnqueueUniqueKeyFinished(t *testing.T, h *harness) {
	// Each end frees the key: succeeded, cancelled, dead.
	ends := map[store.State]func(*store.Job){
		store.StateSucceeded: func(j *store.Job) { h.ack(h.leaseOne("w")) },
		store.StateCancelled: func(j *store.Job) { h.cancel(j.ID) },
		store.StateDead: func(j *store.Job) {
			l := h.leaseOne("w")
			if _, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: l.ID, Token: token(t, l), Error: "x", NoRetry: true, Now: h.now()}); err != nil {
				t.Fatal(err)
			}
		},
	}
	for state, end := range ends {
		first := h.enqueueOne(store.JobSpec{Kind: "k", UniqueKey: ptr("u")})
		end(first)
		if got := h.get(first.ID).State; got != state {
			t.Fatalf("first job %s, want %s", got, state)
		}
		res, err := h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k", UniqueKey: ptr("u")}}, Now: h.now()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Jobs[0].ID == first.ID || res.Existing[0] || res.Jobs[0].State != store.StateAvailable {
			t.Errorf("after the first job %s: got %s existing %v, want a new available job", state, res.Jobs[0].ID, res.Existing[0])
		}
		h.cancel(res.Jobs[0].ID) // free the key for the next end
	}
}

func testEnqueueUniqueKeyInBatch(t *testing.T, h *harness) {
	res, err := h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{
		{Kind: "k", UniqueKey: ptr("u"), Payload: json.RawMessage(`1`)},
		{Kind: "k", UniqueKey: ptr("v")},
		{Kind: "k", UniqueKey: ptr("u"), Payload: json.RawMessage(`2`)},
		{Kind: "k", UniqueKey: ptr("u"), Queue: "other"},
	}, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Jobs
	if j[2].ID != j[0].ID {
		t.Errorf("jobs[2] = %s, want jobs[0] %s (same unique_key in one batch)", j[2].ID, j[0].ID)
	}
	wantJSON(t, "jobs[2].payload", j[2].Payload, []byte(`1`))
	if j[1].ID == j[0].ID || j[3].ID == j[0].ID || j[1].ID == j[3].ID {
		t.Errorf("distinct keys or queues shared a job: %q", ids(j))
	}
	if want := []bool{false, false, true, false}; fmt.Sprint(res.Existing) != fmt.Sprint(want) {
		t.Errorf("existing = %v, want %v", res.Existing, want)
	}
	if got := h.queue(store.DefaultQueue).Counts[store.StateAvailable]; got != 2 {
		t.Errorf("default queue holds %d jobs, want 2", got)
	}
}

// enqueueKeyed enqueues one job under an idempotency key.
func (h *harness) enqueueKeyed(key, hash string) (*store.JobEnqueueResult, error) {
	return h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{
		Jobs:           []store.JobSpec{{Kind: "k", Payload: json.RawMessage(`"` + hash + `"`)}},
		IdempotencyKey: key,
		RequestHash:    hash,
		Now:            h.now(),
	})
}

// wantReplay checks that res replays the job with id.
func wantReplay(t *testing.T, res *store.JobEnqueueResult, err error, id string) {
	t.Helper()
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !res.Replayed || len(res.Jobs) != 1 || res.Jobs[0].ID != id || len(res.Existing) != 1 || !res.Existing[0] {
		t.Errorf("replay: replayed %v existing %v jobs %q, want the first call's job %s", res.Replayed, res.Existing, ids(res.Jobs), id)
	}
}

func testEnqueueIdempotencyReplay(t *testing.T, h *harness) {
	first, err := h.enqueueKeyed("key-1", "h1")
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed || first.Existing[0] {
		t.Errorf("first call: replayed %v existing %v", first.Replayed, first.Existing)
	}
	h.advance(time.Hour)
	res, err := h.enqueueKeyed("key-1", "h1")
	wantReplay(t, res, err, first.Jobs[0].ID)
	if n := h.queue(store.DefaultQueue).Counts[store.StateAvailable]; n != 1 {
		t.Errorf("%d jobs after a replay, want 1", n)
	}
	// Another key is another request.
	other, err := h.enqueueKeyed("key-2", "h1")
	if err != nil || other.Replayed || other.Jobs[0].ID == first.Jobs[0].ID {
		t.Errorf("another key: err %v replayed %v, want a new job", err, other != nil && other.Replayed)
	}
}

func testEnqueueIdempotencyReplayAfterPrune(t *testing.T, h *harness) {
	first, err := h.enqueueKeyed("key-1", "h1")
	if err != nil {
		t.Fatal(err)
	}
	id := first.Jobs[0].ID
	h.ack(h.leaseOne("w"))
	h.advance(time.Hour)
	n, err := h.s.JobPrune(h.ctx, &store.JobPruneParams{SucceededBefore: h.now(), DeadBefore: h.now(), Limit: 100, Now: h.now()})
	if err != nil || n != 1 {
		t.Fatalf("JobPrune = %d, %v; want the one succeeded job", n, err)
	}
	_, err = h.s.JobGet(h.ctx, &store.JobGetParams{ID: id, Now: h.now()})
	wantErr(t, "JobGet of the pruned job", err, store.ErrNotFound)
	// The key outlives its job: the replay still names the first job.
	res, err := h.enqueueKeyed("key-1", "h1")
	wantReplay(t, res, err, id)
}

func testEnqueueIdempotencyConflict(t *testing.T, h *harness) {
	first, err := h.enqueueKeyed("key-1", "h1")
	if err != nil {
		t.Fatal(err)
	}
	h.advance(store.IdempotencyTTL - time.Minute)
	_, err = h.enqueueKeyed("key-1", "h2")
	wantErr(t, "same key, another hash", err, store.ErrConflict)
	if n := h.queue(store.DefaultQueue).Counts[store.StateAvailable]; n != 1 {
		t.Errorf("%d jobs after a conflict, want 1", n)
	}
	res, err := h.enqueueKeyed("key-1", "h1")
	wantReplay(t, res, err, first.Jobs[0].ID)
}

func testEnqueueIdempotencyExpiry(t *testing.T, h *harness) {
	first, err := h.enqueueKeyed("key-1", "h1")
	if err != nil {
		t.Fatal(err)
	}
	h.advance(store.IdempotencyTTL + time.Second)
	if _, err := h.s.KeyPrune(h.ctx, &store.KeyPruneParams{Limit: 100, Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	res, err := h.enqueueKeyed("key-1", "h2")
	if err != nil {
		t.Fatalf("reuse of an expired key: %v", err)
	}
	if res.Replayed || res.Existing[0] || res.Jobs[0].ID == first.Jobs[0].ID {
		t.Errorf("reuse of an expired key: replayed %v existing %v, want a new job", res.Replayed, res.Existing)
	}
	// The first job is unfinished: only its key expired.
	wantState(t, h.get(first.Jobs[0].ID), store.StateAvailable, 0, 0)
}

// A key may carry its own window (webhook deliveries dedupe for the hook's
// dedupe_ms): it replays inside the window and is free after it.
func testEnqueueIdempotencyCustomTTL(t *testing.T, h *harness) {
	keyed := func(hash string) (*store.JobEnqueueResult, error) {
		return h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{
			Jobs:           []store.JobSpec{{Kind: "k"}},
			IdempotencyKey: "hook:gh:delivery-1",
			RequestHash:    hash,
			IdempotencyTTL: 72 * time.Hour,
			Now:            h.now(),
		})
	}
	first, err := keyed("h1")
	if err != nil {
		t.Fatal(err)
	}
	h.advance(48 * time.Hour) // past the default 24 h, inside 72 h
	res, err := keyed("h1")
	wantReplay(t, res, err, first.Jobs[0].ID)
	h.advance(25 * time.Hour)
	res, err = keyed("h2")
	if err != nil {
		t.Fatalf("reuse after the key's own window: %v", err)
	}
	if res.Replayed || res.Jobs[0].ID == first.Jobs[0].ID {
		t.Errorf("reuse after the key's own window: replayed %v, want a new job", res.Replayed)
	}
}

// enqueueAlso enqueues one job under key and also, with the request hash
// and key window of a webhook delivery.
func (h *harness) enqueueAlso(hash, key string, also ...string) (*store.JobEnqueueResult, error) {
	return h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{
		Jobs:           []store.JobSpec{{Kind: "k"}},
		IdempotencyKey: key,
		AlsoKeys:       also,
		RequestHash:    hash,
		IdempotencyTTL: 72 * time.Hour,
		Now:            h.now(),
	})
}

// A request known by two names (a GitHub delivery: its id, and its signed
// body) replays when either was seen; the first of its keys, in order,
// that has a live record names the job.
func testEnqueueIdempotencyAlsoKeys(t *testing.T, h *harness) {
	first, err := h.enqueueAlso("h", "id-1", "body-x")
	if err != nil || first.Replayed {
		t.Fatalf("first call: %v, replayed %v", err, first != nil && first.Replayed)
	}
	j1 := first.Jobs[0].ID
	h.advance(time.Hour)
	res, err := h.enqueueAlso("h", "id-2", "body-x") // another id, the same body
	wantReplay(t, res, err, j1)
	res, err = h.enqueueAlso("h", "id-1", "body-y") // the same id, another body
	wantReplay(t, res, err, j1)
	res, err = h.enqueueAlso("h", "body-x") // a key is a key, whichever position recorded it
	wantReplay(t, res, err, j1)

	second, err := h.enqueueAlso("h", "id-3", "body-z", "body-z") // a key twice is one key
	if err != nil || second.Replayed || second.Jobs[0].ID == j1 {
		t.Fatalf("new names: %v, want a new job", err)
	}
	j2 := second.Jobs[0].ID
	res, err = h.enqueueAlso("h", "id-3", "body-x") // both seen, for two jobs: the first key wins
	wantReplay(t, res, err, j2)
	res, err = h.enqueueAlso("h", "id-9", "body-x", "body-z")
	wantReplay(t, res, err, j1)

	// Without an IdempotencyKey there is no idempotency at all.
	res, err = h.enqueueAlso("h", "", "body-x")
	if err != nil || res.Replayed {
		t.Errorf("AlsoKeys without IdempotencyKey: %v, replayed %v; want a new job", err, res != nil && res.Replayed)
	}
	if n := h.queue(store.DefaultQueue).Counts[store.StateAvailable]; n != 3 {
		t.Errorf("%d jobs, want 3", n)
	}
	// Every key of the first call lives as long as the window, no longer.
	h.advance(71*time.Hour + time.Second)
	for _, key := range []string{"id-1", "body-x"} {
		res, err := h.enqueueAlso("h", key)
		if err != nil || res.Replayed {
			t.Errorf("%s past its window: %v, replayed %v; want a new job", key, err, res != nil && res.Replayed)
		}
	}
}

// A request hash that differs from the record a key finds is a conflict,
// whichever key found it, and nothing is recorded.
func testEnqueueIdempotencyAlsoKeysConflict(t *testing.T, h *harness) {
	first, err := h.enqueueAlso("h1", "id-1", "body-x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.enqueueAlso("h2", "id-2", "body-x")
	wantErr(t, "another hash under an also key", err, store.ErrConflict)
	res, err := h.enqueueAlso("h1", "id-2")
	if err != nil || res.Replayed {
		t.Errorf("the key of the refused call: %v, replayed %v; want it free", err, res != nil && res.Replayed)
	}
	res, err = h.enqueueAlso("h1", "body-x")
	wantReplay(t, res, err, first.Jobs[0].ID)
}

// Concurrent calls sharing one of their keys make one job, which all the
// others replay.
func testEnqueueIdempotencyAlsoKeysConcurrent(t *testing.T, h *harness) {
	const calls = 8
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		res   = make([]*store.JobEnqueueResult, calls)
		errs  = make([]error, calls)
	)
	for i := range calls {
		wg.Go(func() {
			<-start
			res[i], errs[i] = h.enqueueAlso("h", fmt.Sprintf("id-%d", i), "body-x")
		})
	}
	close(start)
	wg.Wait()
	jobs, created := map[string]bool{}, 0
	for i := range calls {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		jobs[res[i].Jobs[0].ID] = true
		if !res[i].Replayed {
			created++
		}
	}
	if created != 1 || len(jobs) != 1 {
		t.Errorf("%d calls created %d jobs and answered %d, want 1 of each", calls, created, len(jobs))
	}
	if n := h.queue(store.DefaultQueue).Counts[store.StateAvailable]; n != 1 {
		t.Errorf("%d jobs in the queue, want 1", n)
	}
}
