package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/store/storetest"
)

func open(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

// The hot paths, the very statements the store runs, must read their
// partial indexes, never scan jobs: a plan that says "SCAN jobs" would make
// them O(table), and one that reads jobs_state_id instead costs as many
// rows as the state holds (a prune behind a million succeeded jobs).
func TestHotPathsUseIndexes(t *testing.T) {
	s := open(t)
	for _, hp := range sqlite.HotPathsForTest(storetest.Base) {
		plan := s.PlanForTest(t.Context(), hp.Query, hp.Args...)
		t.Logf("%s:\n%s", hp.Name, plan)
		if strings.HasPrefix(plan, "error") {
			t.Errorf("%s: %s", hp.Name, plan)
		}
		if strings.Contains(plan, "SCAN jobs") || strings.Contains(plan, "SCAN j ") || strings.HasSuffix(plan, "SCAN j\n") {
			t.Errorf("%s scans jobs:\n%s", hp.Name, plan)
		}
		if hp.Index != "" && !strings.Contains(plan, "INDEX "+hp.Index+" ") {
			t.Errorf("%s does not read %s:\n%s", hp.Name, hp.Index, plan)
		}
	}
}

func TestReopenKeepsJobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	res, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k"}}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(t.Context(), path) // migrations run again: must be a no-op
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j, err := s.JobGet(t.Context(), &store.JobGetParams{ID: res.Jobs[0].ID})
	if err != nil || j.Kind != "k" || j.State != store.StateAvailable {
		t.Fatalf("after reopen: %+v, %v", j, err)
	}
}

// TestOneStorePerFile: while a Store has the file open, a second Open of
// it (here in the same process: flock belongs to the open file) is refused
// with ErrInUse and a message naming the file and the holder, also under
// another spelling of the path or through a symbolic link; once the first
// closes, the file opens again.
func TestOneStorePerFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "tether.db")
	first, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Join(dir, ".", "tether.db"), link(t, path)} {
		second, err := sqlite.Open(t.Context(), p)
		if err == nil {
			second.Close()
			t.Fatalf("a second Open of %s while the first is open succeeded", p)
		}
		want := fmt.Sprintf("%s: in use by another Tether server (pid %d holds %s.lock)", path, os.Getpid(), path)
		if !errors.Is(err, sqlite.ErrInUse) || !strings.Contains(err.Error(), want) {
			t.Errorf("second Open(%s) = %v, want ErrInUse saying %q", p, err, want)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open after the first closed: %v", err)
	}
	again.Close()
}

// link makes a symbolic link to path and returns it.
func link(t *testing.T, path string) string {
	t.Helper()
	l := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(path, l); err != nil {
		t.Fatal(err)
	}
	return l
}
