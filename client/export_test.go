package client

import "time"

// SetCleanup shortens the time r's last settles and its deregistration
// get after the shutdown grace (cleanupTimeout).
func SetCleanup(r *Runner, d time.Duration) { r.cleanup = d }
