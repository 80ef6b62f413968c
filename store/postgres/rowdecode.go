package postgres

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// jobColumnTypes are the types of jobColumns, in order. A result whose
// fields are these, all sent in binary, is decoded by decodeJobRow; any
// other goes through pgx's Scan.
var jobColumnTypes = []uint32{
	pgtype.UUIDOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // id, queue, kind, state
	pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, // priority, attempt, max_attempts, rescues
	pgtype.Int8OID, pgtype.Int8OID, pgtype.Int8OID, // timeout_ms, backoff_base_ms, backoff_max_ms
	pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, // run_at, created_at, started_at, finished_at
	pgtype.Int4OID, pgtype.BoolOID, // progress, cancel_requested
	pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // unique_key, dead_reason, last_error
	pgtype.JSONBOID, pgtype.JSONBOID, pgtype.JSONBOID, pgtype.JSONBOID, // tags, payload, metadata, result
	pgtype.TextOID, pgtype.TextOID, pgtype.TimestamptzOID, pgtype.UUIDOID, // worker_id, token, expires_at, attempt_id
	pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // traceparent, tracestate, ended_by, concurrency_key, schedule
	pgtype.TimestamptzOID, // scheduled_for
}

// jobLayout is how a result's jobColumns arrive. pgx asks for numbers,
// times, booleans and uuids in binary, and for text and jsonb as text (the
// same bytes as text's binary form; jsonb's binary form is a version byte
// before its text).
type jobLayout struct{ jsonbBinary bool }

// layoutOf reports whether fields are jobColumns in a layout decodeJobRow
// reads: as pgx asks for them when it knows the statement (every mode but
// the simple protocol, which sends everything as text).
func layoutOf(fields []pgconn.FieldDescription) (jobLayout, bool) {
	var l jobLayout
	if len(fields) != len(jobColumnTypes) {
		return l, false
	}
	jsonbFormat := int16(-1)
	for i, f := range fields {
		if f.DataTypeOID != jobColumnTypes[i] {
			return l, false
		}
		switch {
		case f.DataTypeOID == pgtype.TextOID: // either format: the same bytes
		case f.DataTypeOID != pgtype.JSONBOID:
			if f.Format != pgtype.BinaryFormatCode {
				return l, false
			}
		case jsonbFormat == -1:
			jsonbFormat = f.Format
		case f.Format != jsonbFormat:
			return l, false
		}
	}
	l.jsonbBinary = jsonbFormat == pgtype.BinaryFormatCode
	return l, true
}

// decodeJobRow fills r from one row's values, laid out as l says. It
// does what pgx's Scan does into dest() for these types, a third of the
// server's work in leasing 100 jobs, without a scan plan per column and an
// allocation per nullable value.
func (r *jobRow) decodeJobRow(l jobLayout, v [][]byte) error {
	d := rowDecoder{jsonbBinary: l.jsonbBinary}
	r.ID = d.uuid(v[0])
	r.Queue, r.Kind, r.State = d.text(v[1]), d.text(v[2]), d.text(v[3])
	r.Priority, r.Attempt, r.MaxAttempts, r.Rescues = d.int4(v[4]), d.int4(v[5]), d.int4(v[6]), d.int4(v[7])
	r.TimeoutMS, r.BackoffBaseMS, r.BackoffMaxMS = d.int8(v[8]), d.int8(v[9]), d.int8(v[10])
	r.RunAt, r.CreatedAt = d.time(v[11]), d.time(v[12])
	r.StartedAt, r.FinishedAt = d.timeOrNil(v[13]), d.timeOrNil(v[14])
	if v[15] != nil {
		p := d.int4(v[15])
		r.Progress = &p
	}
	r.CancelRequested = d.bool(v[16])
	r.UniqueKey, r.DeadReason, r.LastError = d.textOrNil(v[17]), d.textOrNil(v[18]), d.textOrNil(v[19])
	r.Tags = d.tags(v[20])
	r.Payload, r.Metadata, r.Result = d.jsonb(v[21]), d.jsonb(v[22]), d.jsonb(v[23])
	r.WorkerID, r.Token = d.textOrNil(v[24]), d.textOrNil(v[25])
	r.ExpiresAt = d.timeOrNil(v[26])
	if v[27] != nil {
		id := d.uuid(v[27])
		r.AttemptID = &id
	}
	r.TraceParent, r.TraceState, r.EndedBy = d.textOrNil(v[28]), d.textOrNil(v[29]), d.textOrNil(v[30])
	r.ConcurrencyKey, r.Schedule = d.textOrNil(v[31]), d.textOrNil(v[32])
	r.ScheduledFor = d.timeOrNil(v[33])
	return d.err
}

// rowDecoder decodes binary values, keeping the first error.
type rowDecoder struct {
	jsonbBinary bool
	err         error
}

var errNullValue = errors.New("NULL in a NOT NULL column")

func (d *rowDecoder) fail(what string, b []byte) {
	if d.err == nil {
		if b == nil {
			d.err = fmt.Errorf("decode %s: %w", what, errNullValue)
		} else {
			d.err = fmt.Errorf("decode %s: %d bytes", what, len(b))
		}
	}
}

func (d *rowDecoder) text(b []byte) string {
	if b == nil {
		d.fail("text", b)
	}
	return string(b)
}

func (d *rowDecoder) textOrNil(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

func (d *rowDecoder) int4(b []byte) int {
	if len(b) != 4 {
		d.fail("int4", b)
		return 0
	}
	return int(int32(binary.BigEndian.Uint32(b)))
}

func (d *rowDecoder) int8(b []byte) int64 {
	if len(b) != 8 {
		d.fail("int8", b)
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (d *rowDecoder) bool(b []byte) bool {
	if len(b) != 1 {
		d.fail("bool", b)
		return false
	}
	return b[0] == 1
}

// y2k is Postgres's epoch for timestamps, in microseconds after Unix's.
const y2k = 946_684_800_000_000

func (d *rowDecoder) time(b []byte) time.Time {
	us := d.int8(b)
	if us == math.MaxInt64 || us == math.MinInt64 { // ±infinity: no time.Time
		d.fail("timestamptz infinity", b)
		return time.Time{}
	}
	return time.UnixMicro(us + y2k)
}

func (d *rowDecoder) timeOrNil(b []byte) *time.Time {
	if b == nil {
		return nil
	}
	t := d.time(b)
	return &t
}

func (d *rowDecoder) uuid(b []byte) string {
	if len(b) != 16 {
		d.fail("uuid", b)
		return ""
	}
	const hex = "0123456789abcdef"
	var s [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s[j] = '-'
			j++
		}
		s[j], s[j+1] = hex[c>>4], hex[c&0x0f]
		j += 2
	}
	return string(s[:])
}

// jsonbText is a jsonb value's text: after its version byte when sent in
// binary.
func (d *rowDecoder) jsonbText(b []byte, what string) []byte {
	if !d.jsonbBinary {
		return b
	}
	if len(b) == 0 || b[0] != 1 {
		d.fail(what, b)
		return nil
	}
	return b[1:]
}

// jsonb is a jsonb value's text, copied: the row's buffer is reused for
// the next row.
func (d *rowDecoder) jsonb(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), d.jsonbText(b, "jsonb")...)
}

// tags decodes the tags column, a JSON array of strings; most jobs have
// none.
func (d *rowDecoder) tags(b []byte) []string {
	if b == nil {
		d.fail("tags", b)
		return nil
	}
	text := d.jsonbText(b, "tags")
	if string(text) == "[]" {
		return []string{}
	}
	var tags []string
	if err := json.Unmarshal(text, &tags); err != nil && d.err == nil {
		d.err = fmt.Errorf("decode tags: %w", err)
	}
	return tags
}
