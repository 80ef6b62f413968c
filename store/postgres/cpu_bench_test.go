package postgres_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// pgCPUEnv names the process id of the test database's postmaster, when
// it runs on this machine: benchmarks then report the CPU the server's
// processes (it and its children, the backends) spent per job, a figure
// much steadier than the rate on a shared machine.
const pgCPUEnv = "TETHER_BENCH_PG_PID"

// pgCPU reads the CPU time of the postmaster named by pgCPUEnv and its
// children from /proc, all of them and the client backends alone (whose
// title holds "tether", the test role: no autovacuum, checkpointer or WAL
// writer, whose passes fall in one run and not another); ok is false
// without it.
func pgCPU() (all, backends time.Duration, ok bool) {
	pid := os.Getenv(pgCPUEnv)
	if pid == "" {
		return 0, 0, false
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks, backendTicks int64
	for _, path := range stats {
		b, err := os.ReadFile(path)
		end := bytes.LastIndexByte(b, ')')
		if err != nil || end < 0 {
			continue
		}
		f := bytes.Fields(b[end+1:])
		if len(f) < 13 || string(bytes.Fields(b)[0]) != pid && string(f[1]) != pid {
			continue
		}
		u, _ := strconv.ParseInt(string(f[11]), 10, 64)
		s, _ := strconv.ParseInt(string(f[12]), 10, 64)
		ticks += u + s
		if title, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "cmdline")); bytes.Contains(title, []byte(" tether ")) {
			backendTicks += u + s
		}
	}
	const tick = 10 * time.Millisecond // USER_HZ 100
	return time.Duration(ticks) * tick, time.Duration(backendTicks) * tick, true
}

// pgMeter measures the database's CPU per job over a benchmark's loop.
type pgMeter struct{ all, backends time.Duration }

func startPGMeter() pgMeter {
	all, backends, _ := pgCPU()
	return pgMeter{all, backends}
}

// report reports the CPU per job since the meter started, when known.
func (m pgMeter) report(b *testing.B, jobs int) {
	all, backends, ok := pgCPU()
	if !ok || jobs == 0 {
		return
	}
	b.ReportMetric(float64((all-m.all).Microseconds())/float64(jobs), "pg-µs/job")
	b.ReportMetric(float64((backends-m.backends).Microseconds())/float64(jobs), "backend-µs/job")
}
