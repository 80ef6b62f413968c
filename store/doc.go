// Package store is Tether's domain: the job, worker and node types, the Store
// interface every backend implements, and the sentinel errors.
//
// # Lifecycle
//
// A job is enqueued as available, or as scheduled when its run_at lies in the
// future. The scheduler promotes due scheduled jobs to available once a tick,
// so a due job reads as available everywhere within one tick.
//
// A lease moves up to max available jobs of the named queues to running in one
// conditional write, in order of priority (high first), run_at, then id, and
// never from a paused queue. It adds one to attempt, sets the owner (the
// worker id), a fresh random token and expires_at = now + timeout, and opens
// an attempt entry. Two concurrent leasers never get the same job.
//
// # Fencing
//
// Ack, fail, extend and release present the lease token. A token that is not
// the job's current lease (the job was recovered, reaped, released, settled or
// leased again) yields ErrLeaseLost and changes nothing. Tokens are never
// reused, so a worker that lost a job can never settle it. An ack repeated
// under the token that already settled the job returns the job unchanged.
//
// # Recovery
//
// Workers heartbeat; a lease or an extend counts as one. On every tick, every
// server node lists running jobs whose owner has been silent for dead_after
// and recovers each with one compare-and-set on (id, owner, token, running).
// The winner closes the attempt as orphaned, recording the node that rescued
// it and the owner's last sign of life, adds one to rescues and applies the
// failure decisions (see Decide): back to available at once, or dead with
// crash_loop or attempts_exhausted. A racing node's CAS matches nothing. The
// timeout reaper is the backstop for a live worker holding a job past its
// expires_at: the attempt closes as timed_out and the job backs off.
//
// Every job taken from a worker (rescued or reaped) is reported to it once, in
// the lost list of its next heartbeat.
//
// # Ends
//
// Succeeded and cancelled jobs are pruned after a retention period, dead jobs
// after a longer one. Idempotency keys live on independently of the jobs they
// name, for their own TTL.
//
// # Time
//
// Every method takes the current time in its params: the store's clock is the
// one clock, and tests pass any instant.
package store
