package client

import (
	"bytes"
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"
)

// leaseAnswer is the answer to a lease.
type leaseAnswer struct {
	Jobs []*Job `json:"jobs"`
}

// decodeBody decodes b by decodeJobs, or the general way when that one
// does not read it.
func (a *leaseAnswer) decodeBody(b []byte) error {
	if jobs, ok := decodeJobs(b); ok {
		a.Jobs = jobs
		return nil
	}
	type plain leaseAnswer // without decodeBody
	return json.NewDecoder(bytes.NewReader(b)).Decode((*plain)(a))
}

// decodeJobs reads a lease answer, {"jobs": [job, …]}, the way
// encoding/json would into a struct of one Jobs []*Job field, but in one
// pass and without reflection: a lease of 100 jobs decoded by encoding/json
// was over half of a busy worker's CPU. It reads the shape the server
// writes (known keys once each, strings without escapes, integers, UTC
// times to the millisecond, no attempts) and answers ok false at anything
// else, for the caller to decode the body the general way; FuzzDecodeJobs
// holds the two ways equal wherever this one answers.
func decodeJobs(b []byte) (jobs []*Job, ok bool) {
	d := &jobsDecoder{b: b}
	if !d.byte('{') {
		return nil, false
	}
	seen := false
	for first := true; ; first = false {
		if d.byte('}') {
			return jobs, true
		}
		if !first && !d.byte(',') {
			return nil, false
		}
		key, ok := d.key()
		if !ok {
			return nil, false
		}
		if string(key) != "jobs" {
			if foldEqual(key, "jobs") || !d.skip() {
				return nil, false
			}
			continue
		}
		if seen {
			return nil, false // encoding/json would decode into the first
		}
		seen = true
		if d.null() {
			jobs = nil
			continue
		}
		if jobs, ok = d.jobs(); !ok {
			return nil, false
		}
	}
}

// jobs reads an array of jobs (a null element is a nil job).
func (d *jobsDecoder) jobs() ([]*Job, bool) {
	if !d.byte('[') {
		return nil, false
	}
	jobs := []*Job{}
	if d.byte(']') {
		return jobs, true
	}
	for {
		var j *Job
		if !d.null() {
			j = &Job{}
			if !d.job(j) {
				return nil, false
			}
		}
		jobs = append(jobs, j)
		if d.byte(']') {
			return jobs, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

// jobKeys are the keys of a job this decoder reads, in Job's order; the
// constants below index it.
var jobKeys = []string{"id", "queue", "kind", "payload", "priority", "state", "attempt", "max_attempts",
	"timeout_ms", "backoff", "run_at", "created_at", "started_at", "finished_at", "unique_key", "tags",
	"metadata", "last_error", "result", "progress", "cancel_requested", "rescues", "dead_reason", "lease",
	"trace", "concurrency_key", "schedule", "scheduled_for"}

const (
	keyID = iota
	keyQueue
	keyKind
	keyPayload
	keyPriority
	keyState
	keyAttempt
	keyMaxAttempts
	keyTimeout
	keyBackoff
	keyRunAt
	keyCreatedAt
	keyStartedAt
	keyFinishedAt
	keyUniqueKey
	keyTags
	keyMetadata
	keyLastError
	keyResult
	keyProgress
	keyCancelRequested
	keyRescues
	keyDeadReason
	keyLease
	keyTrace
	keyConcurrencyKey
	keySchedule
	keyScheduledFor
)

var (
	backoffKeys = []string{"base_ms", "max_ms"}
	leaseKeys   = []string{"worker_id", "token", "expires_at"}
	traceKeys   = []string{"traceparent", "tracestate"}
)

// job reads one job object into j.
func (d *jobsDecoder) job(j *Job) bool {
	var o object
	if !o.open(d) {
		return false
	}
	for {
		k, more := o.next(d, jobKeys)
		if !more {
			return o.ok
		}
		ok := false
		switch k {
		case keyID:
			j.ID, ok = d.strField(j.ID)
		case keyQueue:
			j.Queue, ok = d.strField(j.Queue)
		case keyKind:
			j.Kind, ok = d.strField(j.Kind)
		case keyPayload:
			j.Payload, ok = d.raw()
		case keyPriority:
			ok = d.intField(&j.Priority)
		case keyState:
			j.State, ok = d.strField(j.State)
		case keyAttempt:
			ok = d.intField(&j.Attempt)
		case keyMaxAttempts:
			ok = d.intField(&j.MaxAttempts)
		case keyTimeout:
			ok = d.int64Field(&j.TimeoutMS)
		case keyBackoff:
			j.Backoff, ok = d.backoff()
		case keyRunAt:
			ok = d.time(&j.RunAt)
		case keyCreatedAt:
			ok = d.time(&j.CreatedAt)
		case keyStartedAt:
			j.StartedAt, ok = d.optTime()
		case keyFinishedAt:
			j.FinishedAt, ok = d.optTime()
		case keyUniqueKey:
			j.UniqueKey, ok = d.optStr()
		case keyTags:
			j.Tags, ok = d.strings()
		case keyMetadata:
			j.Metadata, ok = d.raw()
		case keyLastError:
			j.LastError, ok = d.optStr()
		case keyResult:
			j.Result, ok = d.raw()
		case keyProgress:
			j.Progress, ok = d.optInt()
		case keyCancelRequested:
			ok = d.bool(&j.CancelRequested)
		case keyRescues:
			ok = d.intField(&j.Rescues)
		case keyDeadReason:
			j.DeadReason, ok = d.optStr()
		case keyLease:
			j.Lease, ok = d.lease()
		case keyTrace:
			j.Trace, ok = d.trace()
		case keyConcurrencyKey:
			j.ConcurrencyKey, ok = d.optStr()
		case keySchedule:
			j.Schedule, ok = d.optStr()
		case keyScheduledFor:
			j.ScheduledFor, ok = d.optTime()
		}
		if !ok {
			return false
		}
	}
}

func (d *jobsDecoder) backoff() (*Backoff, bool) {
	if d.null() {
		return nil, true
	}
	b := &Backoff{}
	var o object
	if !o.open(d) {
		return nil, false
	}
	for {
		k, more := o.next(d, backoffKeys)
		if !more {
			return b, o.ok
		}
		v := &b.BaseMS
		if k == 1 {
			v = &b.MaxMS
		}
		if !d.int64Field(v) {
			return nil, false
		}
	}
}

func (d *jobsDecoder) lease() (*Lease, bool) {
	if d.null() {
		return nil, true
	}
	l := &Lease{}
	var o object
	if !o.open(d) {
		return nil, false
	}
	for {
		k, more := o.next(d, leaseKeys)
		if !more {
			return l, o.ok
		}
		ok := false
		switch k {
		case 0:
			l.WorkerID, ok = d.strField(l.WorkerID)
		case 1:
			l.Token, ok = d.strField(l.Token)
		default:
			ok = d.time(&l.ExpiresAt)
		}
		if !ok {
			return nil, false
		}
	}
}

func (d *jobsDecoder) trace() (*Trace, bool) {
	if d.null() {
		return nil, true
	}
	t := &Trace{}
	var o object
	if !o.open(d) {
		return nil, false
	}
	for {
		k, more := o.next(d, traceKeys)
		if !more {
			return t, o.ok
		}
		ok := false
		if k == 0 {
			t.Traceparent, ok = d.strField(t.Traceparent)
		} else {
			t.Tracestate, ok = d.strField(t.Tracestate)
		}
		if !ok {
			return nil, false
		}
	}
}

// object walks the members of an object whose known keys are given,
// skipping the others, as encoding/json skips them. A key twice, or one
// that differs from a known key only in case (which encoding/json would
// take for it), is not for this decoder; nor is a job's attempts.
type object struct {
	seen  uint64
	first bool
	ok    bool // the object ended well
	hint  int  // the index after the last key read: the server's order
}

// open reads the object's opening brace.
func (o *object) open(d *jobsDecoder) bool {
	o.first = true
	return d.byte('{')
}

// next reads up to the value of the next known key and returns its index
// in keys, with more true; at the object's end, or at anything this
// decoder does not read, more is false and ok says which.
func (o *object) next(d *jobsDecoder, keys []string) (k int, more bool) {
	for {
		if d.byte('}') {
			o.ok = true
			return 0, false
		}
		if !o.first && !d.byte(',') {
			return 0, false
		}
		o.first = false
		key, ok := d.key()
		if !ok {
			return 0, false
		}
		if o.hint < len(keys) && string(key) == keys[o.hint] {
			// The key the server writes next. The known keys differ
			// from one another in more than case, so matching one
			// exactly rules out a fold of another.
			k = o.hint
		} else {
			var folded bool
			if k, folded = findKey(key, keys); folded {
				return 0, false
			}
		}
		if k >= 0 {
			if o.seen&(1<<k) != 0 {
				return 0, false
			}
			o.seen |= 1 << k
			o.hint = k + 1
			return k, true
		}
		if foldEqual(key, "attempts") || !d.skip() {
			return 0, false
		}
	}
}

// findKey returns the index of key in keys, -1 if it is none of them;
// folded is true if it differs from one only in case.
func findKey(key []byte, keys []string) (k int, folded bool) {
	for i, known := range keys {
		if string(key) == known {
			return i, false
		}
		if foldEqual(key, known) {
			return -1, true
		}
	}
	return -1, false
}

// strField reads a string; null leaves the field as it was.
func (d *jobsDecoder) strField(was string) (string, bool) {
	if d.null() {
		return was, true
	}
	return d.str()
}

// int64Field reads an integer; null leaves it.
func (d *jobsDecoder) int64Field(v *int64) bool {
	if d.null() {
		return true
	}
	n, ok := d.int()
	*v = n
	return ok
}

// strings reads an array of strings (a null element is "") or null.
func (d *jobsDecoder) strings() ([]string, bool) {
	if d.null() {
		return nil, true
	}
	if !d.byte('[') {
		return nil, false
	}
	out := []string{}
	if d.byte(']') {
		return out, true
	}
	for {
		s, ok := d.strField("")
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if d.byte(']') {
			return out, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

// jobsDecoder reads JSON from b[i:].
type jobsDecoder struct {
	b []byte
	i int
}

// ws skips white space.
func (d *jobsDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// byte consumes c (after white space) if it comes next.
func (d *jobsDecoder) byte(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// literal consumes lit (after white space) if it comes next.
func (d *jobsDecoder) literal(lit string) bool {
	d.ws()
	if len(d.b)-d.i < len(lit) {
		return false
	}
	for k := range len(lit) {
		if d.b[d.i+k] != lit[k] {
			return false
		}
	}
	d.i += len(lit)
	return true
}

func (d *jobsDecoder) null() bool { return d.literal("null") }

// key reads an object key and its colon, in place. Keys are ASCII here:
// encoding/json folds case beyond it ("ſtate" is its "state").
func (d *jobsDecoder) key() ([]byte, bool) {
	k, ok := d.strBytes()
	for _, c := range k {
		if c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return k, ok && d.byte(':')
}

// str reads a string with no escapes and valid UTF-8; anything else is
// not for this decoder.
func (d *jobsDecoder) str() (string, bool) {
	s, ok := d.strBytes()
	return string(s), ok && utf8.Valid(s)
}

// strBytes is str in place, without the UTF-8 check.
func (d *jobsDecoder) strBytes() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// foldEqual reports whether ASCII key equals known but for case.
func foldEqual(key []byte, known string) bool {
	if len(key) != len(known) {
		return false
	}
	for i, c := range key {
		k := known[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= k && k <= 'Z' {
			k += 'a' - 'A'
		}
		if c != k {
			return false
		}
	}
	return true
}

// optStr reads a string or null.
func (d *jobsDecoder) optStr() (*string, bool) {
	if d.null() {
		return nil, true
	}
	s, ok := d.str()
	return &s, ok
}

// int reads an integer that fits in an int64 (no fraction, no exponent).
func (d *jobsDecoder) int() (int64, bool) {
	d.ws()
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	start := d.i
	var n int64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		digit := int64(d.b[d.i] - '0')
		if n > (math.MaxInt64-digit)/10 {
			return 0, false
		}
		n = n*10 + digit
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > 1 && d.b[start] == '0' {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// optInt reads an integer or null.
func (d *jobsDecoder) optInt() (*int, bool) {
	if d.null() {
		return nil, true
	}
	n := 0
	return &n, d.intField(&n)
}

// intField reads an integer into an int field; null leaves it.
func (d *jobsDecoder) intField(v *int) bool {
	if d.null() {
		return true
	}
	n, ok := d.int()
	*v = int(n)
	return ok && int64(int(n)) == n
}

// bool reads true or false; null leaves v.
func (d *jobsDecoder) bool(v *bool) bool {
	switch {
	case d.literal("true"):
		*v = true
	case d.literal("false"):
		*v = false
	default:
		return d.null()
	}
	return true
}

// time reads a time as Time.UnmarshalJSON does: the server's form
// (2006-01-02T15:04:05.000Z) directly, any other through it; null leaves v.
func (d *jobsDecoder) time(v *time.Time) bool {
	if d.null() {
		return true
	}
	d.ws()
	start := d.i
	s, ok := d.str()
	if !ok {
		return false
	}
	if t, ok := parseStamp(s); ok {
		*v = t
		return true
	}
	return v.UnmarshalJSON(d.b[start:d.i]) == nil
}

// optTime reads a time or null.
func (d *jobsDecoder) optTime() (*time.Time, bool) {
	if d.null() {
		return nil, true
	}
	var t time.Time
	return &t, d.time(&t)
}

// parseStamp parses exactly YYYY-MM-DDTHH:MM:SS.mmmZ with every field in
// range; anything else is for time.Parse.
func parseStamp(s string) (time.Time, bool) {
	if len(s) != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
		s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec, ms := num(11, 2), num(14, 2), num(17, 2), num(20, 3)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
		sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*1_000_000, time.UTC)
	if t.Day() != day { // the 31st of a 30-day month, say: time.Parse refuses it
		return time.Time{}, false
	}
	return t, true
}

// raw reads any value and returns its text as RawMessage keeps it.
func (d *jobsDecoder) raw() (json.RawMessage, bool) {
	d.ws()
	start := d.i
	if !d.skip() {
		return nil, false
	}
	return append(json.RawMessage(nil), d.b[start:d.i]...), true
}

// skip reads past one valid value of any kind. Strings may hold escapes
// here; depth is bounded as encoding/json bounds it.
func (d *jobsDecoder) skip() bool { return d.skipDepth(0) }

func (d *jobsDecoder) skipDepth(depth int) bool {
	if depth > 10000 {
		return false
	}
	d.ws()
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		d.i++
		if d.byte(end) {
			return true
		}
		for {
			if c == '{' && !d.skipString() || c == '{' && !d.byte(':') {
				return false
			}
			if !d.skipDepth(depth + 1) {
				return false
			}
			if d.byte(end) {
				return true
			}
			if !d.byte(',') {
				return false
			}
		}
	case c == '"':
		return d.skipString()
	case c == '-' || c >= '0' && c <= '9':
		return d.skipNumber()
	default:
		return d.literal("true") || d.literal("false") || d.literal("null")
	}
}

// skipString reads past a valid string, escapes included.
func (d *jobsDecoder) skipString() bool {
	if !d.byte('"') {
		return false
	}
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			d.i++
			if d.i >= len(d.b) {
				return false
			}
			switch d.b[d.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i++
			case 'u':
				if d.i+5 > len(d.b) {
					return false
				}
				for _, h := range d.b[d.i+1 : d.i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				d.i += 5
			default:
				return false
			}
		default:
			d.i++
		}
	}
	return false
}

// skipNumber reads past a number in JSON's grammar.
func (d *jobsDecoder) skipNumber() bool {
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.b[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.b) && d.b[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
