package store

import "time"

// Orphan is a running job whose owner is silent: a candidate for recovery.
type Orphan struct {
	JobID    string
	WorkerID string
	Token    string
	// LastHeartbeatAt is the owner's last sign of life; zero if the owner
	// never registered.
	LastHeartbeatAt time.Time
}
