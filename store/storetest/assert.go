package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var (
	uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	// A token of at least 128 bits, hex-encoded.
	tokenRE = regexp.MustCompile(`^[0-9a-fA-F]{32,}$`)
)

// wantErr fails unless err wraps target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want %v", what, err, target)
	}
}

// wantState checks a job's state, attempt and rescues.
func wantState(t *testing.T, j *store.Job, state store.State, attempt, rescues int) {
	t.Helper()
	if j.State != state || j.Attempt != attempt || j.Rescues != rescues {
		t.Errorf("job %s: state %s attempt %d rescues %d, want %s %d %d",
			j.ID, j.State, j.Attempt, j.Rescues, state, attempt, rescues)
	}
	if (state == store.StateRunning) != (j.Lease != nil) {
		t.Errorf("job %s: %s with lease %+v", j.ID, j.State, j.Lease)
	}
}

// wantDead checks that a job is dead for reason, finished at now.
func wantDead(t *testing.T, j *store.Job, reason store.DeadReason, now time.Time) {
	t.Helper()
	if j.State != store.StateDead {
		t.Errorf("job %s: state %s, want dead", j.ID, j.State)
	}
	if j.DeadReason == nil || *j.DeadReason != reason {
		t.Errorf("job %s: dead reason %v, want %s", j.ID, deref(j.DeadReason), reason)
	}
	wantTimePtr(t, "finished_at", j.FinishedAt, now)
	if j.Lease != nil {
		t.Errorf("job %s: dead with lease %+v", j.ID, j.Lease)
	}
}

func wantTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %s, want %s", what, fmtTime(got), fmtTime(want))
	}
}

func wantTimePtr(t *testing.T, what string, got *time.Time, want time.Time) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %s", what, fmtTime(want))
		return
	}
	wantTime(t, what, *got, want)
}

// wantWithin checks that got lies in [from, to].
func wantWithin(t *testing.T, what string, got, from, to time.Time) {
	t.Helper()
	if got.Before(from) || got.After(to) {
		t.Errorf("%s = %s, want within [%s, %s]", what, fmtTime(got), fmtTime(from), fmtTime(to))
	}
}

// wantBackoff checks that a retry's run_at is now + base·2^(n−1) ±10 %
// (and a millisecond of storage rounding).
func wantBackoff(t *testing.T, j *store.Job, now time.Time, d time.Duration) {
	t.Helper()
	lo := time.Duration(float64(d)*0.9) - time.Millisecond
	hi := time.Duration(float64(d)*1.1) + time.Millisecond
	wantWithin(t, "retry run_at", j.RunAt, now.Add(lo), now.Add(hi))
}

// wantSet checks that got holds exactly the ids of want, each once, in any
// order.
func wantSet(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s = %q, want %q (any order, each once)", what, g, w)
	}
}

// lastAttempt returns the newest attempt entry of a job read by JobGet.
func lastAttempt(t *testing.T, j *store.Job) store.Attempt {
	t.Helper()
	if len(j.Attempts) == 0 {
		t.Fatalf("job %s has no attempts", j.ID)
	}
	return j.Attempts[len(j.Attempts)-1]
}

// wantOutcome checks the newest attempt entry's outcome and finish time.
func wantOutcome(t *testing.T, j *store.Job, outcome store.Outcome, finished time.Time) {
	t.Helper()
	a := lastAttempt(t, j)
	if a.Outcome != outcome {
		t.Errorf("job %s attempt %d: outcome %s, want %s", j.ID, a.Attempt, a.Outcome, outcome)
	}
	wantTimePtr(t, "attempt finished_at", a.FinishedAt, finished)
}

// sameJob fails if a job changed between two reads. The JSON form compares
// times by instant and payloads by bytes, which two reads of one backend
// share.
func sameJob(t *testing.T, before, after *store.Job) {
	t.Helper()
	b, err1 := json.Marshal(before)
	a, err2 := json.Marshal(after)
	if err1 != nil || err2 != nil {
		t.Fatalf("marshal jobs: %v, %v", err1, err2)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("job changed:\nbefore %s\nafter  %s", b, a)
	}
}

// jsonEqual reports whether two JSON texts hold the same value; backends
// may reorder keys and drop whitespace.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

func wantJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !jsonEqual(got, want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// closed reports whether ch is closed now, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wakeTimeout bounds the wait for a wake-up that shared stores deliver
// asynchronously (LISTEN/NOTIFY, pub/sub); an in-process hub closes at once.
const wakeTimeout = 10 * time.Second

// wantWoken fails unless ch closes within wakeTimeout.
func wantWoken(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wakeTimeout):
		t.Errorf("%s did not wake leasers within %s", what, wakeTimeout)
	}
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
