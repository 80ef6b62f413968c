package main

import (
	"bytes"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tetherq/tether/api"
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

	var out, errOut bytes.Buffer
	args := []string{"bench", "--url", srv.URL, "--jobs", "1200", "--workers", "3", "--batch", "50", "--producers", "2"}
	if err := run(t.Context(), args, &out, &errOut); err != nil {
		t.Fatalf("bench: %v\n%s", err, errOut.String())
	}
	line := regexp.MustCompile(`^tether n=1200 producers=2 workers=3 batch=50 enqueue=\d+ jobs/s work=\d+ jobs/s lease\+settle p50=[\d.]+ms p99=[\d.]+ms cpu/job client=(\d+us|n/a) server=n/a\n$`)
	if !line.MatchString(out.String()) {
		t.Errorf("bench printed %q", out.String())
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
