package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSQLiteOneServerPerFile: a second server on the SQLite file of a
// running one exits 1 at once, naming the file and the first's pid, and
// never listens; after the first is killed (kill -9: no cleanup of its
// own), a new server opens the file.
func TestSQLiteOneServerPerFile(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "t.db")
	first := startServer(t, db)
	out, err := runBinary(t, "--addr", "127.0.0.1:0", "--store", "sqlite:"+db)
	want := fmt.Sprintf("tether: --store sqlite:%s: %s: in use by another Tether server (pid %d holds %s.lock)",
		db, db, first.cmd.Process.Pid, db)
	if exitCode(err) != 1 || !strings.Contains(out, want) || strings.Contains(out, "tether listening") {
		t.Errorf("second server: exit %v, output:\n%s\nwant exit 1 and %q", err, out, want)
	}
	if err := first.signal(t, syscall.SIGKILL); err == nil {
		t.Fatal("the first server exited 0 on SIGKILL")
	}
	startServer(t, db)
}
