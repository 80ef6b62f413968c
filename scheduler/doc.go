// Package scheduler is the maintenance loop every server process runs once a
// tick: it heartbeats the node itself, recovers the jobs of dead workers,
// reaps leases past their expiry, promotes due scheduled jobs and prunes
// finished ones past their retention.
//
// Each task lives in its own file as a runOnce(ctx, now) that works in
// bounded batches until a short batch; Scheduler.Run is the thin ticker
// around them. Many nodes may run the loop against one store at once: every
// transition is a conditional write in the store, so no leader is needed.
package scheduler
