package main

import (
	"bytes"
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
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "bench.db"))
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

	line := regexp.MustCompile(`^tether n=1200 producers=2 workers=3 batch=50 enqueue=\d+ jobs/s work=\d+ jobs/s lease\+settle p50=[\d.]+ms p99=[\d.]+ms cpu/job client=(\d+us|n/a) server=n/a\n$`)
	for _, mode := range []string{"--serial=false", "--serial"} {
		var out, errOut bytes.Buffer
		args := []string{"bench", "--url", srv.URL, "--jobs", "1200", "--workers", "3", "--batch", "50", "--producers", "2", mode}
		if err := run(t.Context(), args, &out, &errOut); err != nil {
			t.Fatalf("bench %s: %v\n%s", mode, err, errOut.String())
		}
		if !line.MatchString(out.String()) {
			t.Errorf("bench %s printed %q", mode, out.String())
		}
	}
	// Every job of both runs was settled: none is left in any queue.
	queues, err := st.QueueList(t.Context(), &store.QueueListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(queues) != 2 {
		t.Errorf("%d queues after two runs, want 2", len(queues))
	}
	for _, q := range queues {
		c := q.Counts
		if c[store.StateAvailable]+c[store.StateRunning] != 0 || c[store.StateSucceeded] != 1200 {
			t.Errorf("queue %s after the bench: %v", q.Name, c)
		}
	}
}

func TestBenchFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--batch", "0"}, {"--batch", "1001"}, {"--jobs", "0"}, {"--nope"}} {
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
