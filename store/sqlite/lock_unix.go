//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFile takes PATH.lock with an exclusive flock for the Store's life,
// before anything reads or writes the database. One process per file is
// what the backend is built for: its wake-ups and its writer queue live in
// the process, so a second server on the file would neither wake the
// first's long-polls nor queue behind its writes. The kernel drops the lock
// when its holder exits however it exits, so a killed server leaves no
// stale lock behind, only the file. flock belongs to the open file, so a
// second Open in the same process is refused too.
func lockFile(path string) (*os.File, error) {
	if path == ":memory:" {
		return nil, nil // private to its connection: nothing to share
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a link and its target are one database
	}
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w by another Tether server (%s holds %s); a SQLite store serves "+
				"one process: stop that one first, or use Postgres or Redis for replicas", path, ErrInUse, holder, name)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	// The holder's pid, for the message of the next one refused.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// readHolder names the process that wrote the lock file.
func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
		return "pid " + strconv.Itoa(pid)
	}
	return "a process"
}
