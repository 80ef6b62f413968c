package store

import "errors"

// Sentinel errors. Backends translate their own failures into these once;
// the api package maps each to one HTTP status.
var (
	// ErrNotFound means the job, worker or queue does not exist.
	ErrNotFound = errors.New("not found")
	// ErrLeaseLost means the token is not the job's current lease.
	ErrLeaseLost = errors.New("lease lost")
	// ErrInvalidState means the job's state does not allow the transition.
	ErrInvalidState = errors.New("invalid state")
	// ErrConflict means an idempotency key was reused with another request.
	ErrConflict = errors.New("conflict")
)
