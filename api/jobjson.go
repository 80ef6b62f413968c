package api

import (
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tetherq/tether/store"
)

// writeJobs answers {"jobs": [...]}, the body of a lease and of a batch
// enqueue, each job as view renders it at now (newLeasedJobView in a lease
// answer, the only one whose leases carry their token; newJobView in any
// other), written field by field as jobView's tags name them. These are the
// hot responses (100 to 1,000 jobs each), and encoding/json spends more on
// them than the store does: it reflects over every field and re-validates
// the output of every MarshalJSON (each time stamp, each raw payload).
// TestAppendJobMatchesEncodingJSON and FuzzAppendJob hold the two
// encodings equal.
func writeJobs(w http.ResponseWriter, status int, jobs []*store.Job, now time.Time, view func(*store.Job, time.Time) *jobView) {
	b := make([]byte, 0, 64+len(jobs)*640)
	b = append(b, `{"jobs":[`...)
	for i, j := range jobs {
		if i > 0 {
			b = append(b, ',')
		}
		if j.State == "" { // known by id only (an idempotent replay of a pruned job)
			b = append(b, `{"id":`...)
			b = appendString(b, j.ID)
			b = append(b, '}')
			continue
		}
		b = appendJob(b, view(j, now))
	}
	writeWhole(w, "application/json", status, append(b, "]}\n"...))
}

// appendJob appends v as JSON, in jobView's field order.
func appendJob(b []byte, v *jobView) []byte {
	b = appendField(b, `{"id":`, v.ID)
	b = appendField(b, `,"queue":`, v.Queue)
	b = appendField(b, `,"kind":`, v.Kind)
	b = appendRaw(append(b, `,"payload":`...), v.Payload)
	b = strconv.AppendInt(append(b, `,"priority":`...), int64(v.Priority), 10)
	b = appendField(b, `,"state":`, string(v.State))
	b = strconv.AppendInt(append(b, `,"attempt":`...), int64(v.Attempt), 10)
	b = strconv.AppendInt(append(b, `,"max_attempts":`...), int64(v.MaxAttempts), 10)
	b = strconv.AppendInt(append(b, `,"timeout_ms":`...), v.TimeoutMS, 10)
	b = strconv.AppendInt(append(b, `,"backoff":{"base_ms":`...), v.Backoff.BaseMS, 10)
	b = strconv.AppendInt(append(b, `,"max_ms":`...), v.Backoff.MaxMS, 10)
	b = appendStamp(append(b, `},"run_at":`...), &v.RunAt)
	b = appendStamp(append(b, `,"created_at":`...), &v.CreatedAt)
	b = appendStamp(append(b, `,"started_at":`...), v.StartedAt)
	b = appendStamp(append(b, `,"finished_at":`...), v.FinishedAt)
	b = appendOptString(append(b, `,"unique_key":`...), v.UniqueKey)
	b = append(b, `,"tags":[`...)
	for i, t := range v.Tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, t)
	}
	b = appendRaw(append(b, `],"metadata":`...), v.Metadata)
	b = appendOptString(append(b, `,"last_error":`...), v.LastError)
	b = appendRaw(append(b, `,"result":`...), v.Result)
	b = append(b, `,"progress":`...)
	if v.Progress == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*v.Progress), 10)
	}
	b = strconv.AppendBool(append(b, `,"cancel_requested":`...), v.CancelRequested)
	b = strconv.AppendInt(append(b, `,"rescues":`...), int64(v.Rescues), 10)
	b = appendOptString(append(b, `,"dead_reason":`...), v.DeadReason)
	b = append(b, `,"lease":`...)
	if v.Lease == nil {
		b = append(b, "null"...)
	} else {
		b = appendField(b, `{"worker_id":`, v.Lease.WorkerID)
		if v.Lease.Token != "" { // omitempty
			b = appendField(b, `,"token":`, v.Lease.Token)
		}
		b = appendStamp(append(b, `,"expires_at":`...), &v.Lease.ExpiresAt)
		b = append(b, '}')
	}
	b = append(b, `,"trace":`...)
	if v.Trace == nil {
		b = append(b, "null"...)
	} else {
		b = appendField(b, `{"traceparent":`, v.Trace.Parent)
		if v.Trace.State != "" { // omitempty
			b = appendField(b, `,"tracestate":`, v.Trace.State)
		}
		b = append(b, '}')
	}
	b = appendOptString(append(b, `,"concurrency_key":`...), v.ConcurrencyKey)
	b = appendOptString(append(b, `,"schedule":`...), v.Schedule)
	b = appendStamp(append(b, `,"scheduled_for":`...), v.ScheduledFor)
	return append(b, '}')
}

func appendField(b []byte, key, s string) []byte { return appendString(append(b, key...), s) }

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

func appendStamp(b []byte, s *stamp) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = appendTime(b, time.Time(*s))
	return append(b, '"')
}

// appendTime appends t in timeLayout, as AppendFormat would: a lease
// answer holds five times a job, and the general formatter, which reads
// its layout anew each call, was a tenth of the server's CPU in a
// burn-down. Years outside 0..9999 take the general way.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timeLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1_000_000
	return append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// appendRaw appends a stored JSON value (checked when it was accepted), or
// null for none.
func appendRaw(b []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does:
// quotes, backslashes and control characters (\b \f \n \r \t by name), <,
// > and & (so the body is safe to embed in HTML), U+2028 and U+2029, and
// invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b': // by name, as encoding/json has since Go 1.22
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
