package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// procCPU is the CPU time (user and system) used so far by the processes
// on this machine whose command name is name, read from /proc: the
// database server's processes, say, which a bench client beside it wants
// a per-job figure of. A name of digits is a process id instead: that
// process and its children (a Postgres postmaster and its backends, when
// several clusters run). Processes that ended between two readings take
// their time with them, so the figure is for long-lived servers.
func procCPU(name string) (time.Duration, bool) {
	parent := ""
	if _, err := strconv.Atoi(name); err == nil {
		parent = name
	}
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, false
	}
	tick := 100 // USER_HZ, 100 on every Linux architecture Go runs on
	var total int64
	found := false
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid ... utime stime: comm may hold spaces and
		// parentheses, so the fields are counted after its last ')'.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open {
			continue
		}
		fields := bytes.Fields(b[end+1:])
		if len(fields) < 13 {
			continue
		}
		if parent == "" && string(b[open+1:end]) != name ||
			parent != "" && string(bytes.TrimSpace(b[:open])) != parent && string(fields[1]) != parent {
			continue
		}
		utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
		stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		total += utime + stime
		found = true
	}
	return time.Duration(total) * time.Second / time.Duration(tick), found
}
