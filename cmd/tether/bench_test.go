package main

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

func TestBenchBurnsDown(t *testing.T) {
	t.Parallel()
	st, srv := serveSQLite(t)

	line := regexp.MustCompile(`^tether n=1200 producers=2 workers=3 batch=50 queues=1\+0 enqueue=\d+ jobs/s calls=batch p50=[\d.]+ms p99=[\d.]+ms work=\d+ jobs/s lease\+settle p50=[\d.]+ms p99=[\d.]+ms cpu/job client=(\d+us|n/a) server=n/a\n$`)
	for mode, queue := range map[string]string{"--serial=false": "kept-pipelined", "--serial": "kept-serial"} {
		var out, errOut bytes.Buffer
		args := []string{"bench", "--url", srv.URL, "--jobs", "1200", "--workers", "3", "--batch", "50", "--producers", "2",
			"--queue", queue, "--keep", mode}
		if err := run(t.Context(), args, &out, &errOut); err != nil {
			t.Fatalf("bench %s: %v\n%s", mode, err, errOut.String())
		}
		if !line.MatchString(out.String()) {
			t.Errorf("bench %s printed %q", mode, out.String())
		}
	}
	// With --keep every job of both runs is left settled in its queue.
	queues, err := st.QueueList(t.Context(), &store.QueueListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(queues) != 2 || queues[0].Name != "kept-pipelined" || queues[1].Name != "kept-serial" {
		t.Errorf("queues after two kept runs: %+v, want kept-pipelined and kept-serial", queues)
	}
	for _, q := range queues {
		c := q.Counts
		if c[store.StateAvailable]+c[store.StateRunning] != 0 || c[store.StateSucceeded] != 1200 {
			t.Errorf("queue %s after the bench: %v", q.Name, c)
		}
	}

	// Without it, the bench deletes its jobs and deregisters its workers.
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"bench", "--url", srv.URL, "--jobs", "500", "--workers", "2"}, &out, &errOut); err != nil {
		t.Fatalf("bench: %v\n%s", err, errOut.String())
	}
	after, err := st.QueueList(t.Context(), &store.QueueListParams{})
	if err != nil {
		t.Fatal(err)
	}
	workers, err := st.WorkerList(t.Context(), &store.WorkerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || len(workers) != 6 {
		t.Errorf("after a bench without --keep: %d queues, %d workers; want the 2 kept queues and their 6 workers", len(after), len(workers))
	}
	if errOut.Len() > 0 {
		t.Errorf("the clean-up complained: %s", errOut.String())
	}
}

// The scale modes: jobs spread over several queues every lease names, among
// more queues holding a job each, enqueued one per request; and a run that
// stops after the enqueue.
func TestBenchScaleModes(t *testing.T) {
	t.Parallel()
	st, srv := serveSQLite(t)

	var out, errOut bytes.Buffer
	args := []string{"bench", "--url", srv.URL, "--jobs", "300", "--workers", "2", "--batch", "20", "--producers", "4",
		"--queues", "3", "--other-queues", "5", "--single", "--queue", "spread", "--keep"}
	if err := run(t.Context(), args, &out, &errOut); err != nil {
		t.Fatalf("bench: %v\n%s", err, errOut.String())
	}
	line := regexp.MustCompile(`^tether n=300 producers=4 workers=2 batch=20 queues=3\+5 enqueue=\d+ jobs/s calls=single p50=[\d.]+ms p99=[\d.]+ms work=\d+ jobs/s `)
	if !line.MatchString(out.String()) {
		t.Errorf("bench printed %q", out.String())
	}
	queues, err := st.QueueList(t.Context(), &store.QueueListParams{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]map[store.State]int64{}
	for _, q := range queues {
		counts[q.Name] = q.Counts
	}
	for i := range 3 {
		if c := counts[fmt.Sprintf("spread-%d", i)]; c[store.StateSucceeded] != 100 || c[store.StateAvailable] != 0 {
			t.Errorf("queue spread-%d after the bench: %v, want its 100 jobs settled", i, c)
		}
	}
	for i := range 5 {
		if c := counts[fmt.Sprintf("spread-other-%d", i)]; c[store.StateAvailable] != 1 {
			t.Errorf("queue spread-other-%d after the bench: %v, want its one job left alone", i, c)
		}
	}
	if len(queues) != 8 {
		t.Errorf("%d queues after the bench, want 8", len(queues))
	}

	// --enqueue-only enqueues, measures, and (without --keep) deletes.
	out.Reset()
	args = []string{"bench", "--url", srv.URL, "--jobs", "50", "--single", "--producers", "3", "--enqueue-only", "--queue", "enq"}
	if err := run(t.Context(), args, &out, &errOut); err != nil {
		t.Fatalf("bench --enqueue-only: %v\n%s", err, errOut.String())
	}
	line = regexp.MustCompile(`^tether n=50 producers=3 workers=4 batch=100 queues=1\+0 enqueue=\d+ jobs/s calls=single p50=[\d.]+ms p99=[\d.]+ms cpu/job client=(\d+us|n/a) server=n/a\n$`)
	if !line.MatchString(out.String()) {
		t.Errorf("bench --enqueue-only printed %q", out.String())
	}
	after, err := st.QueueList(t.Context(), &store.QueueListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 8 || errOut.Len() > 0 {
		t.Errorf("after --enqueue-only: %d queues (want the 8 kept), stderr %q", len(after), errOut.String())
	}
}

func TestBenchFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--batch", "0"}, {"--batch", "1001"}, {"--jobs", "0"}, {"--nope"},
		{"--queues", "0"}, {"--queues", "101"}, {"--other-queues", "-1"}} {
		if _, err := parseBench(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseBench(%q): no error", args)
		}
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"frobnicate"}, &out, &errOut); err != errUsage || !bytes.Contains(errOut.Bytes(), []byte("unknown command")) {
		t.Errorf("unknown command: %v, %q", err, errOut.String())
	}
	if err := run(t.Context(), nil, &out, &errOut); err != errUsage {
		t.Errorf("no command: %v", err)
	}
}

func TestPolls(t *testing.T) {
	t.Parallel()
	st, srv := serveSQLite(t)
	var out, errOut bytes.Buffer
	args := []string{"polls", "--url", srv.URL, "--pollers", "20", "--queues", "10", "--enqueues", "15", "--gap", "1ms", "--idle", "10ms"}
	if err := run(t.Context(), args, &out, &errOut); err != nil {
		t.Fatalf("polls: %v\n%s", err, errOut.String())
	}
	line := regexp.MustCompile(`^tether polls pollers=20 queues=10 idle cpu=n/a rss=n/a enqueue p50=[\d.]+ms p99=[\d.]+ms enqueue→poll p50=[\d.]+ms p99=[\d.]+ms\n$`)
	if !line.MatchString(out.String()) {
		t.Errorf("polls printed %q", out.String())
	}
	// Every job it enqueued was leased and acked; its workers are gone.
	stats, err := st.StatsGet(t.Context(), &store.StatsGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Jobs[store.StateSucceeded] != 15 || stats.Jobs[store.StateAvailable]+stats.Jobs[store.StateRunning] != 0 {
		t.Errorf("jobs after polls: %v, want 15 succeeded", stats.Jobs)
	}
	if ws, err := st.WorkerList(t.Context(), &store.WorkerListParams{}); err != nil || len(ws) != 0 {
		t.Errorf("workers after polls: %d (%v), want none", len(ws), err)
	}
	for _, bad := range [][]string{{"--pollers", "0"}, {"--queues", "30", "--pollers", "20"}, {"--enqueues", "0"}} {
		if _, err := parsePolls(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("parsePolls(%q): no error", bad)
		}
	}
}

// --concurrency limits the run's queue before the burn-down, which still
// works every job, and clears the limits again at the end.
func TestBenchConcurrency(t *testing.T) {
	t.Parallel()
	st, srv := serveSQLite(t)
	var out, errOut bytes.Buffer
	args := []string{"bench", "--url", srv.URL, "--jobs", "200", "--workers", "3", "--batch", "20",
		"--queue", "capped", "--concurrency", "5"}
	if err := run(t.Context(), args, &out, &errOut); err != nil {
		t.Fatalf("bench: %v\n%s", err, errOut.String())
	}
	line := regexp.MustCompile(`^tether n=200 producers=2 workers=3 batch=20 queues=1\+0 concurrency=5 enqueue=\d+ jobs/s .* work=\d+ jobs/s `)
	if !line.MatchString(out.String()) {
		t.Errorf("bench printed %q", out.String())
	}
	queues, err := st.QueueList(t.Context(), &store.QueueListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queues {
		if q.Limits != nil {
			t.Errorf("queue %s kept limits %+v after the run", q.Name, q.Limits)
		}
	}
}

// serveSQLite serves the API on a fresh SQLite store, both closed by t's
// cleanup.
func serveSQLite(t *testing.T) (*sqlite.Store, *httptest.Server) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := api.New(api.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return st, srv
}
