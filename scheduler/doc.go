// Package scheduler is the maintenance loop every server process runs once a
// tick: it heartbeats the node itself (node.go), recovers the jobs of dead
// workers (recover.go), reaps leases past their expiry (reap.go), promotes
// due scheduled jobs (promote.go), prunes finished jobs past their
// retention (prune.go), expired keys (keys.go) and long-silent workers and
// nodes (silent.go), folds queue count deltas (counts.go) and rolls up the
// per-minute throughput (throughput.go).
//
// Each task lives in its own file as a runOnce(ctx, now) that works in
// bounded batches until a short batch; Scheduler.Run is the thin ticker
// around them. Many nodes may run the loop against one store at once: every
// transition is a conditional write in the store, so no leader is needed.
package scheduler
