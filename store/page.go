package store

import "unicode/utf8"

// Bounds on what one answer may hold. A job's payload, result and metadata
// may each be as large as a request body, so a list of a thousand of them
// could hold gigabytes: lists stop at a byte budget instead, and the texts
// and histories that grow without a request's limit are capped.
const (
	// MaxBatch is the most one call handles: jobs in a batch enqueue, items
	// in a settle, jobs in a lease, a list page, and a maintenance call's
	// default Limit. A store statement of this many rows stays short.
	MaxBatch = 1000
	// DefaultListLimit is JobList's page size when Limit is 0.
	DefaultListLimit = 100
	// DefaultPageBytes is the byte budget of a list page (JobBytes summed)
	// when the caller sets none: a few of the largest jobs, or a thousand
	// ordinary ones.
	DefaultPageBytes = 2 << 20
	// MaxErrorBytes caps a failure's error text, on the job and on its
	// attempt: a stack trace fits, a runaway log does not.
	MaxErrorBytes = 64 << 10
	// MaxAttemptsShown caps the attempts JobGet returns with a job: the
	// newest are kept. A job released over and over has no other bound.
	MaxAttemptsShown = 100
)

// JobBytes is what a job weighs in a page: the sizes of its fields that
// have no fixed bound (payload, result, metadata, last error, tags, unique
// key). Backends stop a page by it and callers read it the same way.
func JobBytes(j *Job) int {
	n := len(j.Payload) + len(j.Result) + len(j.Metadata)
	if j.LastError != nil {
		n += len(*j.LastError)
	}
	if j.UniqueKey != nil {
		n += len(*j.UniqueKey)
	}
	for _, t := range j.Tags {
		n += len(t)
	}
	return n
}

// Budget counts a page's bytes against a limit. The zero Budget (or one of
// limit 0) never runs out.
type Budget struct {
	limit, used int
}

// NewBudget returns a budget of limit bytes; limit 0 means unlimited.
func NewBudget(limit int) Budget { return Budget{limit: limit} }

// Spend adds j to the page and reports whether the page must end with it:
// the first job that brings the total to the limit or over is the last one,
// so a page always holds at least one job however large.
func (b *Budget) Spend(j *Job) (full bool) {
	b.used += JobBytes(j)
	return b.limit > 0 && b.used >= b.limit
}

// Left is what remains of the budget, at least 1; 0 for an unlimited
// budget. A list read in several calls passes it to each.
func (b *Budget) Left() int {
	if b.limit == 0 {
		return 0
	}
	return max(b.limit-b.used, 1)
}

// PageFull reports whether jobs, read as one page under a budget of limit
// bytes, stopped because of it: the list may go on after the last of them.
func PageFull(jobs []*Job, limit int) bool {
	b := NewBudget(limit)
	for _, j := range jobs {
		if b.Spend(j) {
			return true
		}
	}
	return false
}

// CapError returns s cut to MaxErrorBytes at a character boundary, with a
// note that it was cut.
func CapError(s string) string {
	if len(s) <= MaxErrorBytes {
		return s
	}
	const note = "… [cut at 64 KiB]"
	cut := MaxErrorBytes - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// NewestAttempts keeps the newest MaxAttemptsShown of attempts, oldest
// first. Backends read at most that many closed attempts, add the open
// one, and pass the whole through it.
func NewestAttempts(a []Attempt) []Attempt {
	if len(a) > MaxAttemptsShown {
		return a[len(a)-MaxAttemptsShown:]
	}
	return a
}

// LimitOr returns n, or def when n is not positive: the Limit of a params
// struct left zero.
func LimitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
