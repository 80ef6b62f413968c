package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
)

// enqueueRace holds the first merged enqueue run until release, queues the
// calls behind it one at a time (so the next run takes them in order), and
// returns each call's answer once all are done. runs records the size of
// every run; hold, when set, runs instead of the hook's default in each
// run after the first.
type enqueueRace struct {
	t       *testing.T
	s       *postgres.Store
	mu      sync.Mutex
	runs    []int
	entered chan struct{}
	release chan struct{}
	later   func(calls int)
}

func newEnqueueRace(t *testing.T, s *postgres.Store) *enqueueRace {
	r := &enqueueRace{t: t, s: s, entered: make(chan struct{}), release: make(chan struct{})}
	s.SetEnqueueHookForTest(func(calls int) {
		r.mu.Lock()
		r.runs = append(r.runs, calls)
		first := len(r.runs) == 1
		r.mu.Unlock()
		if first {
			close(r.entered)
			<-r.release
		} else if r.later != nil {
			r.later(calls)
		}
	})
	return r
}

type enqueued struct {
	res      *store.JobEnqueueResult
	err      error
	panicked bool
}

// run starts the leader, queues params behind it in order, calls
// beforeRelease, releases the leader, calls afterRelease and waits for
// every call.
func (r *enqueueRace) run(ctxs []context.Context, params []*store.JobEnqueueParams, beforeRelease, afterRelease func()) []enqueued {
	r.t.Helper()
	out := make([]enqueued, len(params))
	var wg sync.WaitGroup
	call := func(i int) {
		wg.Go(func() {
			defer func() {
				if recover() != nil {
					out[i].panicked = true
				}
			}()
			out[i].res, out[i].err = r.s.JobEnqueue(ctxs[i], params[i])
		})
	}
	call(0)
	<-r.entered
	for i := 1; i < len(params); i++ {
		call(i)
		deadline := time.Now().Add(10 * time.Second)
		for r.s.EnqueuesWaitingForTest() < i {
			if time.Now().After(deadline) {
				r.t.Fatalf("%d enqueues queued, want %d", r.s.EnqueuesWaitingForTest(), i)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	if beforeRelease != nil {
		beforeRelease()
	}
	close(r.release)
	if afterRelease != nil {
		afterRelease()
	}
	wg.Wait()
	return out
}

func one(spec store.JobSpec, now time.Time) *store.JobEnqueueParams {
	return &store.JobEnqueueParams{Jobs: []store.JobSpec{spec}, Now: now}
}

func keyed(key, hash string, now time.Time, also ...string) *store.JobEnqueueParams {
	p := one(store.JobSpec{Kind: "keyed"}, now)
	p.IdempotencyKey, p.RequestHash, p.AlsoKeys = key, hash, also
	return p
}

func ptr[T any](v T) *T { return &v }

// Enqueues that arrive while one runs go out together in the next run, and
// each caller still gets its own answer: unique keys shared between callers
// (or with a job already there) make one job, an Idempotency-Key repeated
// in the run replays its first caller's job or conflicts, per caller, and
// a caller that gave up while queued gets its context's error and no job.
func TestEnqueuesMergeWhileOneRuns(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	held, err := s.JobEnqueue(ctx, one(store.JobSpec{Kind: "k", Queue: "q", UniqueKey: ptr("held")}, now))
	if err != nil {
		t.Fatal(err)
	}
	heldID := held.Jobs[0].ID
	gaveUp, giveUp := context.WithCancel(ctx)
	params := []*store.JobEnqueueParams{
		0:  one(store.JobSpec{Kind: "lead"}, now),
		1:  one(store.JobSpec{Kind: "plain"}, now),
		2:  one(store.JobSpec{Kind: "k", Queue: "q", UniqueKey: ptr("u"), Payload: json.RawMessage(`1`)}, now),
		3:  one(store.JobSpec{Kind: "k", Queue: "q", UniqueKey: ptr("u"), Payload: json.RawMessage(`2`)}, now),
		4:  one(store.JobSpec{Kind: "k", Queue: "q", UniqueKey: ptr("held")}, now),
		5:  one(store.JobSpec{Kind: "k", Queue: "q", UniqueKey: ptr("held")}, now),
		6:  keyed("k1", "h1", now),
		7:  keyed("k1", "h1", now),
		8:  keyed("k1", "h2", now),
		9:  keyed("k2", "h1", now, "k1"), // its first key with a record is k1, 6's
		10: one(store.JobSpec{Kind: "gave-up"}, now),
		11: {Now: now, Jobs: []store.JobSpec{
			{Kind: "b0"}, {Kind: "k", Queue: "q", UniqueKey: ptr("u")}, {Kind: "b2", Queue: "other", UniqueKey: ptr("u")}}},
	}
	ctxs := make([]context.Context, len(params))
	for i := range ctxs {
		ctxs[i] = ctx
	}
	ctxs[10] = gaveUp
	r := newEnqueueRace(t, s)
	got := r.run(ctxs, params, giveUp, nil)

	if len(r.runs) != 2 || r.runs[0] != 1 || r.runs[1] != len(params)-1 {
		t.Errorf("runs of %v enqueues, want [1 %d]", r.runs, len(params)-1)
	}
	if !errors.Is(got[10].err, context.Canceled) || got[10].res != nil {
		t.Errorf("the caller that gave up got %+v, %v; want context.Canceled", got[10].res, got[10].err)
	}
	if !errors.Is(got[8].err, store.ErrConflict) {
		t.Errorf("key k1 under another hash: %v, want ErrConflict", got[8].err)
	}
	for i, g := range got {
		if i == 8 || i == 10 {
			continue
		}
		if g.err != nil || g.res == nil || len(g.res.Jobs) != len(params[i].Jobs) || len(g.res.Existing) != len(g.res.Jobs) {
			t.Fatalf("call %d: %+v, %v", i, g.res, g.err)
		}
	}
	id := func(i, j int) string { return got[i].res.Jobs[j].ID }
	type want struct {
		call, job int
		id        string
		existing  bool
		replayed  bool
	}
	for _, w := range []want{
		{0, 0, "", false, false},
		{1, 0, "", false, false},
		{2, 0, "", false, false},
		{3, 0, id(2, 0), true, false},  // the unique key call 2 created
		{4, 0, heldID, true, false},    // the key's holder from before
		{5, 0, heldID, true, false},    // the same, for a second caller
		{6, 0, "", false, false},       // records k1
		{7, 0, id(6, 0), true, true},   // replays call 6
		{9, 0, id(6, 0), true, true},   // replays call 6 by its also-key
		{11, 0, "", false, false},      //
		{11, 1, id(2, 0), true, false}, // unique key u of queue q, call 2's
		{11, 2, "", false, false},      // u in another queue is another key
	} {
		g := got[w.call].res
		if w.id != "" && g.Jobs[w.job].ID != w.id {
			t.Errorf("call %d job %d is %s, want %s", w.call, w.job, g.Jobs[w.job].ID, w.id)
		}
		if g.Existing[w.job] != w.existing || g.Replayed != w.replayed {
			t.Errorf("call %d job %d: existing %v replayed %v, want %v %v", w.call, w.job, g.Existing[w.job], g.Replayed, w.existing, w.replayed)
		}
	}
	if string(got[3].res.Jobs[0].Payload) != `1` {
		t.Errorf("call 3 got payload %s, want call 2's 1", got[3].res.Jobs[0].Payload)
	}

	// No job twice, none for the caller that gave up: held, then calls 0,
	// 1, 2, 6 and two of 11.
	counts, err := s.ScanCountsForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for k, n := range counts {
		if !strings.HasSuffix(k, "/retrying") {
			total += n
		}
	}
	if total != 7 || counts["q/available"] != 2 {
		t.Errorf("jobs after the run: %v, want 7 in all, 2 in q", counts)
	}
	// The run recorded k1 for call 6's job; k2 was only named by a replay,
	// so it is free.
	res, err := s.JobEnqueue(ctx, keyed("k1", "h1", now))
	if err != nil || !res.Replayed || res.Jobs[0].ID != id(6, 0) {
		t.Errorf("k1 afterwards: %+v, %v; want a replay of call 6's job", res, err)
	}
	res, err = s.JobEnqueue(ctx, keyed("k2", "h9", now))
	if err != nil || res.Replayed {
		t.Errorf("k2 afterwards: %+v, %v; want a new job", res, err)
	}
}

// A key recorded after its caller looked, here by an earlier transaction
// while the caller waited in the queue, is found by the run: that caller
// replays the record's job and the others of the run go on.
func TestMergedEnqueueFindsKeyRecordedSince(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	other, err := s.JobEnqueue(ctx, one(store.JobSpec{Kind: "other"}, now))
	if err != nil {
		t.Fatal(err)
	}
	params := []*store.JobEnqueueParams{one(store.JobSpec{Kind: "lead"}, now), keyed("late", "h", now), one(store.JobSpec{Kind: "plain"}, now)}
	r := newEnqueueRace(t, s)
	got := r.run([]context.Context{ctx, ctx, ctx}, params, func() {
		err := s.ExecForTest(ctx, `INSERT INTO idempotency_keys (key, request_hash, job_id, expires_at)
			VALUES ('late', 'h', $1, $2)`, other.Jobs[0].ID, now.Add(time.Hour))
		if err != nil {
			t.Error(err)
		}
	}, nil)
	wantKeyReplayed(t, s, got, other.Jobs[0].ID)
	if len(r.runs) != 2 || r.runs[1] != 2 {
		t.Errorf("runs %v, want [1 2]: one merged run after the leader", r.runs)
	}
}

// A key that another transaction records while a merged run inserts (after
// the run read the keys) sends the whole run back: nothing of it commits,
// the caller of that key replays the other's job, and the rest enqueue
// again, alone, each job made once.
func TestMergedEnqueueLosesKeyToAnotherTransaction(t *testing.T) {
	t.Parallel()
	url := newSchema(t)
	s := openURL(t, url)
	ctx := t.Context()
	now := time.Now()
	other, err := s.JobEnqueue(ctx, one(store.JobSpec{Kind: "other"}, now))
	if err != nil {
		t.Fatal(err)
	}
	// The other transaction records the key and stays open, so the run
	// reads no record and then waits on its insert.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	blocker, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var xid string
	if err := blocker.QueryRow(ctx, `INSERT INTO idempotency_keys (key, request_hash, job_id, expires_at)
		VALUES ('race', 'h', $1, $2) RETURNING pg_current_xact_id()::text`, other.Jobs[0].ID, now.Add(time.Hour)).Scan(&xid); err != nil {
		t.Fatal(err)
	}
	params := []*store.JobEnqueueParams{one(store.JobSpec{Kind: "lead"}, now), keyed("race", "h", now), one(store.JobSpec{Kind: "plain"}, now)}
	r := newEnqueueRace(t, s)
	got := r.run([]context.Context{ctx, ctx, ctx}, params, nil, func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			var waiting int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks
				WHERE NOT granted AND locktype = 'transactionid' AND transactionid::text = $1`, xid).Scan(&waiting); err != nil {
				t.Error(err)
				break
			}
			if waiting > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Error("the merged run never waited on the other transaction's key")
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := blocker.Commit(ctx); err != nil {
			t.Error(err)
		}
	})
	wantKeyReplayed(t, s, got, other.Jobs[0].ID)
	if len(r.runs) != 2 || r.runs[1] != 2 {
		t.Errorf("runs %v, want [1 2]: the plain call's second run is its own", r.runs)
	}
}

// wantKeyReplayed checks the answers of a leader, a caller of a key whose
// record names job other, and a plain caller: each got its own, and the
// store holds three jobs (other's, the leader's and the plain caller's).
func wantKeyReplayed(t *testing.T, s *postgres.Store, got []enqueued, other string) {
	t.Helper()
	for i, g := range got {
		if g.err != nil || g.res == nil {
			t.Fatalf("call %d: %+v, %v", i, g.res, g.err)
		}
	}
	if !got[1].res.Replayed || got[1].res.Jobs[0].ID != other {
		t.Errorf("the caller of the taken key got %s (replayed %v), want a replay of %s", got[1].res.Jobs[0].ID, got[1].res.Replayed, other)
	}
	if got[2].res.Replayed || got[2].res.Existing[0] {
		t.Errorf("the plain caller got %+v, want a new job", got[2].res)
	}
	counts, err := s.ScanCountsForTest(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := counts[store.DefaultQueue+"/available"]; n != 3 {
		t.Errorf("%d jobs, want 3: the other's, the leader's, the plain caller's once", n)
	}
}

// A merged run that panics before its commit leaves its other callers to
// enqueue alone: each still gets its job, and only once.
func TestMergedEnqueuePanicLeavesCallsToRunAlone(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	params := []*store.JobEnqueueParams{
		one(store.JobSpec{Kind: "lead"}, now), one(store.JobSpec{Kind: "boom"}, now),
		one(store.JobSpec{Kind: "a"}, now), one(store.JobSpec{Kind: "b", UniqueKey: ptr("b")}, now),
	}
	r := newEnqueueRace(t, s)
	r.later = func(calls int) {
		if calls == 3 {
			panic("boom")
		}
	}
	got := r.run([]context.Context{ctx, ctx, ctx, ctx}, params, nil, nil)
	if !got[1].panicked {
		t.Errorf("the panic did not reach the caller that ran the batch")
	}
	for _, i := range []int{0, 2, 3} {
		if got[i].err != nil || got[i].res == nil || got[i].res.Existing[0] {
			t.Errorf("call %d: %+v, %v; want its new job", i, got[i].res, got[i].err)
		}
	}
	counts, err := s.ScanCountsForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := counts[store.DefaultQueue+"/available"]; n != 3 {
		t.Errorf("%d jobs, want 3: the leader's, a's and b's", n)
	}
}

// Many producers enqueueing at once, merged as they come, agree with one
// another: every caller of an Idempotency-Key gets the one job made for
// it, every caller of a unique_key the one job holding it, and no job is
// made twice.
func TestConcurrentEnqueuesAgree(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	const producers, each = 16, 30
	ids := make([][]string, producers)
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for i := range each {
				var p *store.JobEnqueueParams
				switch n := (g + i) % 5; i % 3 {
				case 0:
					p = keyed(fmt.Sprintf("key-%d", n), "h", now)
				case 1:
					p = one(store.JobSpec{Kind: "u", UniqueKey: ptr(fmt.Sprintf("u-%d", n))}, now)
				default:
					p = one(store.JobSpec{Kind: "plain"}, now)
				}
				res, err := s.JobEnqueue(ctx, p)
				if err != nil {
					t.Error(err)
					return
				}
				ids[g] = append(ids[g], res.Jobs[0].ID)
			}
		})
	}
	wg.Wait()
	byName := map[string]map[string]bool{}
	plain := 0
	for g := range producers {
		for i, id := range ids[g] {
			name := fmt.Sprintf("key-%d", (g+i)%5)
			switch i % 3 {
			case 1:
				name = fmt.Sprintf("u-%d", (g+i)%5)
			case 2:
				plain++
				continue
			}
			if byName[name] == nil {
				byName[name] = map[string]bool{}
			}
			byName[name][id] = true
		}
	}
	for name, jobs := range byName {
		if len(jobs) != 1 {
			t.Errorf("%s: callers got %d jobs, want one", name, len(jobs))
		}
	}
	counts, err := s.ScanCountsForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(byName) + plain); counts[store.DefaultQueue+"/available"] != want {
		t.Errorf("%d jobs, want %d: one per key, one per unique key, one per plain call", counts[store.DefaultQueue+"/available"], want)
	}
}

// A batch naming a unique_key twice, which a job holds already, answers
// both with that job (the second was answered with a job never inserted).
func TestBatchRepeatingAHeldUniqueKey(t *testing.T) {
	t.Parallel()
	s := open(t)
	now := time.Now()
	held, err := s.JobEnqueue(t.Context(), one(store.JobSpec{Kind: "k", UniqueKey: ptr("u")}, now))
	if err != nil {
		t.Fatal(err)
	}
	u := store.JobSpec{Kind: "k", UniqueKey: ptr("u")}
	res, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: []store.JobSpec{u, u}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range res.Jobs {
		if j.ID != held.Jobs[0].ID || !res.Existing[i] {
			t.Errorf("job %d: %s (existing %v), want the holder %s", i, j.ID, res.Existing[i], held.Jobs[0].ID)
		}
	}
}

// A merged run the database refuses for one caller's job leaves every
// caller to enqueue alone: the one with the bad payload gets the refusal,
// the others their jobs.
func TestMergedEnqueueRefusedJobFailsAlone(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	params := []*store.JobEnqueueParams{
		one(store.JobSpec{Kind: "lead"}, now),
		one(store.JobSpec{Kind: "bad", Payload: json.RawMessage(`{"unterminated`)}, now),
		one(store.JobSpec{Kind: "good"}, now),
	}
	got := newEnqueueRace(t, s).run([]context.Context{ctx, ctx, ctx}, params, nil, nil)
	if got[1].err == nil || errors.Is(got[1].err, store.ErrUnavailable) {
		t.Errorf("the bad payload's caller got %v, want the database's refusal", got[1].err)
	}
	for _, i := range []int{0, 2} {
		if got[i].err != nil || got[i].res == nil || got[i].res.Existing[0] {
			t.Errorf("call %d: %+v, %v; want its new job", i, got[i].res, got[i].err)
		}
	}
	counts, err := s.ScanCountsForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := counts[store.DefaultQueue+"/available"]; n != 2 {
		t.Errorf("%d jobs, want 2: the leader's and the good one's", n)
	}
}

// An outage during a merged run is every caller's answer.
func TestMergedEnqueueOutage(t *testing.T) {
	t.Parallel()
	st, p := openViaProxy(t, "")
	s := st.(*postgres.Store)
	ctx := t.Context()
	now := time.Now()
	params := []*store.JobEnqueueParams{one(store.JobSpec{Kind: "lead"}, now), one(store.JobSpec{Kind: "a"}, now),
		keyed("k", "h", now)}
	got := newEnqueueRace(t, s).run([]context.Context{ctx, ctx, ctx}, params, p.Cut, nil)
	for i, g := range got {
		if !errors.Is(g.err, store.ErrUnavailable) {
			t.Errorf("call %d during the outage: %+v, %v; want store.ErrUnavailable", i, g.res, g.err)
		}
	}
}
