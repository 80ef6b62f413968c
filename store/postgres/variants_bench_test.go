package postgres_test

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store/postgres"
)

// layoutVariants are changes to the schema the migrations make, each
// taking away one piece of the work a lease and an ack do, to learn what
// that piece costs. A variant's store is good for nothing but this loop:
// without the counting trigger its counts are wrong, without an index its
// reaper or rescue reads every running job.
var layoutVariants = []struct{ name, ddl string }{
	{"as-is", ""},
	{"no-update-trigger", "DROP TRIGGER jobs_updated ON jobs"},
	{"one-running-index", `DROP INDEX jobs_running_worker; DROP INDEX jobs_running_expiry;
		CREATE INDEX jobs_running_worker_expiry ON jobs (worker_id, expires_at) WHERE state = 'running'`},
	{"no-running-indexes", "DROP INDEX jobs_running_worker; DROP INDEX jobs_running_expiry"},
	{"no-finished-indexes", "DROP INDEX jobs_succeeded_finished; DROP INDEX jobs_queue_id"},
	// What a lease and an ack cost with nothing but the row, its primary
	// key and the index a lease reads.
	{"floor", `DROP TRIGGER jobs_updated ON jobs; DROP INDEX jobs_running_worker; DROP INDEX jobs_running_expiry;
		DROP INDEX jobs_succeeded_finished; DROP INDEX jobs_queue_id`},
}

// BenchmarkLayoutVariants weighs the pieces of a lease and an ack: each
// variant gets a schema of its own with 100 jobs per iteration waiting,
// and every iteration leases and acks one batch of 100 on each variant in
// turn, reading the client backends' CPU around each batch. The machine's
// speed drifts by a third over minutes here (other tenants); taking the
// variants batch by batch lets the drift fall on all of them alike, where
// one run after another compared different minutes. Needs
// TETHER_BENCH_PG_PID (the test cluster's postmaster, on this machine):
//
//	TETHER_BENCH_PG_PID=$(head -1 /var/lib/postgresql/15/main/postmaster.pid) \
//	  go test -run '^$' -bench LayoutVariants -benchtime 200x ./store/postgres/
//
// It reports each variant's backend CPU per job.
func BenchmarkLayoutVariants(b *testing.B) {
	if _, _, ok := pgCPU(); !ok {
		b.Skipf("set %s to the test database's postmaster's pid", pgCPUEnv)
	}
	const batch = 100
	now := time.Now()
	type side struct {
		name string
		s    *postgres.Store
		cpu  time.Duration
		jobs int
	}
	sides := make([]*side, len(layoutVariants))
	for i, v := range layoutVariants {
		s := open(b)
		if v.ddl != "" {
			if err := s.ExecForTest(b.Context(), v.ddl); err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
		}
		sides[i] = &side{name: v.name, s: s}
	}
	for _, sd := range sides {
		benchEnqueue(b, sd.s, b.N*batch, now)
	}
	b.ResetTimer()
	for range b.N {
		for _, sd := range sides {
			_, before, _ := pgCPU()
			n := leaseSettle(b, sd.s, "w", batch, now)
			_, after, _ := pgCPU()
			if n == 0 {
				b.Fatalf("%s: the queue ran dry", sd.name)
			}
			sd.cpu += after - before
			sd.jobs += n
		}
	}
	for _, sd := range sides {
		b.ReportMetric(float64(sd.cpu.Microseconds())/float64(sd.jobs), sd.name+"-µs/job")
	}
}
