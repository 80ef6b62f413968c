package sqlite_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The jobs an ending returns are built in Go from the row it read and the
// decision (ending.after), and the update writes only some of their
// columns: each must still be the job as stored, whatever the ending and
// the decision. (That the stored values are right is the contract suite's
// part.)
func TestEndingReturnsStoredJob(t *testing.T) {
	t.Parallel()
	const worker = "w-1"
	at := time.UnixMilli(1_800_000_000_000).UTC()
	later := at.Add(time.Hour) // every lease expired, every worker silent
	rescue := func(t *testing.T, s store.Store, j *store.Job, maxRescues int) []*store.Job {
		orphans, err := s.JobListOrphans(t.Context(), &store.JobListOrphansParams{DeadBefore: later, Limit: 10})
		if err != nil || len(orphans) != 1 || orphans[0].JobID != j.ID {
			t.Fatalf("orphans: %+v, %v", orphans, err)
		}
		got, err := s.JobRecover(t.Context(), &store.JobRecoverParams{Orphans: orphans, NodeID: "n-1", MaxRescues: maxRescues, Now: later})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	reap := func(t *testing.T, s store.Store, _ *store.Job) []*store.Job {
		got, err := s.JobReap(t.Context(), &store.JobReapParams{Limit: 10, Now: later})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	fail := func(noRetry bool) func(t *testing.T, s store.Store, j *store.Job) []*store.Job {
		return func(t *testing.T, s store.Store, j *store.Job) []*store.Job {
			got, err := s.JobFail(t.Context(), &store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "boom", NoRetry: noRetry, Now: later})
			if err != nil {
				t.Fatal(err)
			}
			return []*store.Job{got}
		}
	}
	for _, c := range []struct {
		name        string
		maxAttempts int
		cancel      bool // cancellation requested while running
		end         func(t *testing.T, s store.Store, j *store.Job) []*store.Job
		want        store.State
	}{
		{"rescue, back in the queue", 5, false, func(t *testing.T, s store.Store, j *store.Job) []*store.Job { return rescue(t, s, j, 5) }, store.StateAvailable},
		{"rescue, crash loop", 5, false, func(t *testing.T, s store.Store, j *store.Job) []*store.Job { return rescue(t, s, j, 1) }, store.StateDead},
		{"rescue, cancel requested", 5, true, func(t *testing.T, s store.Store, j *store.Job) []*store.Job { return rescue(t, s, j, 5) }, store.StateCancelled},
		{"reap, retry later", 5, false, reap, store.StateScheduled},
		{"reap, attempts exhausted", 1, false, reap, store.StateDead},
		{"fail, retry later", 5, false, fail(false), store.StateScheduled},
		{"fail, no retry", 5, false, fail(true), store.StateDead},
		{"release", 5, false, func(t *testing.T, s store.Store, j *store.Job) []*store.Job {
			got, err := s.JobRelease(t.Context(), &store.JobReleaseParams{ID: j.ID, Token: j.Lease.Token, Now: later})
			if err != nil {
				t.Fatal(err)
			}
			return []*store.Job{got}
		}, store.StateAvailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			key, ck := "u-1", "k-1"
			spec := store.JobSpec{Queue: "q", Kind: "k", Payload: json.RawMessage(`{"n":1}`), Priority: 3,
				MaxAttempts: c.maxAttempts, UniqueKey: &key, Tags: []string{"a", "b"}, Metadata: json.RawMessage(`{"m":2}`),
				Trace:          &store.Trace{Parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", State: "x=1"},
				ConcurrencyKey: &ck}
			spec.Normalize(at)
			if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: []store.JobSpec{spec}, Now: at}); err != nil {
				t.Fatal(err)
			}
			leased, err := s.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: worker, Queues: []string{"q"}, Max: 1, Now: at})
			if err != nil || len(leased) != 1 {
				t.Fatalf("lease: %d jobs, %v", len(leased), err)
			}
			if _, err := s.JobExtend(t.Context(), &store.JobExtendParams{ID: leased[0].ID, Token: leased[0].Lease.Token,
				Progress: new(40), Now: at}); err != nil {
				t.Fatal(err)
			}
			if c.cancel {
				if _, err := s.JobCancel(t.Context(), &store.JobCancelParams{ID: leased[0].ID, Now: at}); err != nil {
					t.Fatal(err)
				}
			}
			got := c.end(t, s, leased[0])
			if len(got) != 1 || got[0].State != c.want {
				t.Fatalf("ended: %+v, want one job %s", got, c.want)
			}
			stored, err := s.JobGet(t.Context(), &store.JobGetParams{ID: got[0].ID})
			if err != nil {
				t.Fatal(err)
			}
			stored.Attempts = nil // JobGet's own
			if !reflect.DeepEqual(got[0], stored) {
				t.Errorf("returned %s\nstored   %s", dump(got[0]), dump(stored))
			}
		})
	}
}

func dump(j *store.Job) string {
	b, _ := json.Marshal(j)
	return string(b)
}
