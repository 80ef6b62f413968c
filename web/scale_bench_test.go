package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

// BenchmarkPages1M renders every page over a SQLite store holding a
// million jobs, as a server at the end of a busy hour would: most
// succeeded, some dead, retrying, scheduled, waiting and running, with an
// hour of throughput and rescues. Filling takes a few minutes, so it runs
// only with TETHER_BENCH_BIG=1 (never in make test or make bench):
//
//	TETHER_BENCH_BIG=1 go test -run '^$' -bench Pages1M -benchtime 50x -timeout 30m ./web
//
// The time per op is the server time of one page (or of one poll of the
// event stream's aggregates).
func BenchmarkPages1M(b *testing.B) {
	if os.Getenv("TETHER_BENCH_BIG") != "1" {
		b.Skip("set TETHER_BENCH_BIG=1 to fill a million jobs and time every page")
	}
	dir := os.Getenv("TETHER_BENCH_DIR") // reuse a filled file across runs
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, "pages-1m.db")
	_, statErr := os.Stat(path)
	st, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	f := &filler{b: b, st: st, start: now.Add(-time.Hour)}
	if statErr != nil {
		f.fill(1_000_000)
	}
	ids := f.samples()
	h, err := New(Config{Store: st, Insights: st, Now: func() time.Time { return now.Add(time.Minute) }})
	if err != nil {
		b.Fatal(err)
	}
	d := &dash{cfg: Config{HeartbeatInterval: store.DefaultHeartbeatInterval, DeadAfter: store.DefaultDeadAfter},
		store: st, ins: st, now: time.Now}
	b.Run("events-poll", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.snapshot(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, p := range []struct{ name, path string }{
		{"overview", "/"},
		{"queues", "/queues"},
		{"workers", "/workers"},
		{"orphans", "/orphans"},
		{"retries", "/retries"},
		{"retries-queue", "/retries?queue=images"},
		{"dead", "/dead"},
		{"dead-queue", "/dead?queue=emails"},
		{"dead-rare-kind", "/dead?kind=nope"},
		{"jobs", "/jobs"},
		{"jobs-queue-state", "/jobs?queue=emails&state=dead"},
		{"jobs-state-available", "/jobs?state=available"},
		{"jobs-rare-kind", "/jobs?kind=nope"},
		{"jobs-id-prefix", "/jobs?q=" + ids.dead[:13]},
		{"job", "/jobs/" + ids.dead},
		{"fragment-throughput", "/?fragment=throughput"},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p.path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", p.path, rec.Code)
				}
			}
		})
	}
}

// filler writes the million jobs through the store's own batch calls, an
// hour of history moving forward as it goes.
type filler struct {
	b     *testing.B
	st    *sqlite.Store
	start time.Time
}

type sampleIDs struct{ dead string }

var fillQueues = []string{"emails", "images", "reports", "webhooks"}

func (f *filler) at(done, total int) time.Time {
	return f.start.Add(time.Duration(float64(time.Hour) * float64(done) / float64(total)))
}

func (f *filler) fill(total int) {
	ctx := f.b.Context()
	began := time.Now()
	const batch = 1000
	for done := 0; done < total; done += batch {
		at := f.at(done, total)
		q := fillQueues[(done/batch)%len(fillQueues)]
		specs := make([]store.JobSpec, batch)
		for i := range specs {
			specs[i] = store.JobSpec{Kind: q + "_job", Queue: q, Payload: []byte(`{"n":1}`)}
			if i%100 == 0 {
				specs[i].RunAt = at.Add(2 * time.Hour) // scheduled for later
			}
		}
		if _, err := f.st.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: at}); err != nil {
			f.b.Fatal(err)
		}
		// Settle most of what was just enqueued: 1 in 50 dies, 1 in 100
		// retries, 1 in 1000 is rescued from a dead worker; a few wait.
		if done/batch%10 == 9 {
			continue // this batch stays available
		}
		leased, err := f.st.JobLease(ctx, &store.JobLeaseParams{WorkerID: "filler-" + q, Queues: []string{q}, Max: batch, Now: at})
		if err != nil {
			f.b.Fatal(err)
		}
		p := &store.JobSettleParams{Now: at.Add(time.Second)}
		var orphans []store.Orphan
		for i, j := range leased {
			switch {
			case i%1000 == 7:
				orphans = append(orphans, store.Orphan{JobID: j.ID, WorkerID: j.Lease.WorkerID, Token: j.Lease.Token, LastHeartbeatAt: at})
			case i%50 == 3:
				p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "bad input", NoRetry: true})
			case i%100 == 5:
				later := 3 * time.Hour
				p.Fails = append(p.Fails, store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "try later", RetryIn: &later})
			default:
				p.Acks = append(p.Acks, store.JobAckParams{ID: j.ID, Token: j.Lease.Token})
			}
		}
		if _, err := f.st.JobSettle(ctx, p); err != nil {
			f.b.Fatal(err)
		}
		if _, err := f.st.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "node-1", Now: at.Add(15 * time.Second)}); err != nil {
			f.b.Fatal(err)
		}
		if done%100_000 == 0 {
			fmt.Fprintf(os.Stderr, "filled %d jobs in %s\n", done, time.Since(began).Round(time.Second))
		}
	}
	// Live workers at work.
	for i := range 20 {
		w := fmt.Sprintf("worker-%02d", i)
		if _, err := f.st.JobLease(ctx, &store.JobLeaseParams{WorkerID: w, Queues: fillQueues, Max: 25, Now: time.Now()}); err != nil {
			f.b.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "filled %d jobs in %s\n", total, time.Since(began).Round(time.Second))
}

func (f *filler) samples() sampleIDs {
	page, err := f.st.JobListDead(f.b.Context(), &store.JobListDeadParams{Limit: 1})
	if err != nil || len(page.Jobs) == 0 {
		f.b.Fatalf("no dead job to sample: %v", err)
	}
	return sampleIDs{dead: page.Jobs[0].ID}
}
