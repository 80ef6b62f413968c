package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// jobPanel is one job: its fields, payload and result pretty-printed, its
// attempts timeline and the actions its state allows.
type jobPanel struct {
	ID, Queue, Kind, State string
	Priority               int
	Attempt, Max, Rescues  int
	Timeout                string
	Created, RunAt         instant
	Started, Finished      instant
	LeaseWorker            string
	LeaseExpires           instant
	UniqueKey              string
	TraceID, TraceParent   string // the W3C trace id, and the whole traceparent
	Tags                   []string
	DeadReason             string
	LastError              string
	CancelRequested        bool
	Progress               string // "" when none; else "0".."100"
	Payload, Result, Meta  string
	Attempts               []attemptRow
	Actions                []jobAction
	Back                   string
}

type attemptRow struct {
	N                 int
	WorkerID, Outcome string
	Started, Finished instant
	Took              string
	Error             string
	RecoveredBy       string
	LastSeen          instant
}

// maxShownJSON bounds a pretty-printed payload or result on the page.
const maxShownJSON = 64 << 10

func (d *dash) jobPanel(rq *request) (templ.Component, error) {
	id := param(rq.r, "id")
	j, err := d.store.JobGet(rq.ctx, &store.JobGetParams{ID: id, Now: rq.now})
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	st := j.StateAt(rq.now)
	m := jobPanel{ID: j.ID, Queue: j.Queue, Kind: j.Kind, State: stateLabel(j, rq.now), Priority: j.Priority,
		Attempt: j.Attempt, Max: j.MaxAttempts, Rescues: j.Rescues, Timeout: span(j.Timeout),
		Created: instantAt(j.CreatedAt, rq.now), RunAt: instantAt(j.RunAt, rq.now),
		Started: instantOf(j.StartedAt, rq.now), Finished: instantOf(j.FinishedAt, rq.now),
		Tags: j.Tags, CancelRequested: j.CancelRequested, Payload: pretty(j.Payload), Result: pretty(j.Result),
		Meta: pretty(j.Metadata), Actions: jobActions(j, st), Back: rq.back}
	if j.Lease != nil {
		m.LeaseWorker, m.LeaseExpires = j.Lease.WorkerID, instantAt(j.Lease.ExpiresAt, rq.now)
	}
	if t := j.Trace; t != nil && len(t.Parent) >= 35 {
		m.TraceParent = t.Parent
		m.TraceID = t.Parent[3:35] // 00-<trace id>-<parent id>-<flags>
	}
	if j.UniqueKey != nil {
		m.UniqueKey = *j.UniqueKey
	}
	if j.DeadReason != nil {
		m.DeadReason = string(*j.DeadReason)
	}
	if j.LastError != nil {
		m.LastError = *j.LastError
	}
	if a := lastWithError(j.Attempts); a != nil && isRescueMessage(*a, m.LastError) {
		m.LastError = "" // the timeline tells the rescue, once
	}
	if j.Progress != nil {
		m.Progress = strconv.Itoa(min(100, max(0, *j.Progress)))
	}
	for i := len(j.Attempts) - 1; i >= 0; i-- { // newest first
		m.Attempts = append(m.Attempts, newAttemptRow(j.Attempts[i], rq))
	}
	return jobView(m), nil
}

func newAttemptRow(a store.Attempt, rq *request) attemptRow {
	row := attemptRow{N: a.Attempt, WorkerID: a.WorkerID, Outcome: string(a.Outcome),
		Started: instantAt(a.StartedAt, rq.now), Finished: instantOf(a.FinishedAt, rq.now),
		LastSeen: instantOf(a.LastHeartbeatAt, rq.now)}
	end := rq.now
	if a.FinishedAt != nil {
		end = *a.FinishedAt
	}
	row.Took = span(end.Sub(a.StartedAt))
	if a.Error != nil && !isRescueMessage(a, *a.Error) {
		row.Error = *a.Error
	}
	if a.RecoveredBy != nil {
		row.RecoveredBy = *a.RecoveredBy
	}
	return row
}

// isRescueMessage reports whether text is what the rescue that closed a
// wrote (store.RescueMessage) on the attempt and the job. The timeline
// says it in its own words, with the worker's last sign of life, so the
// page shows it there only.
func isRescueMessage(a store.Attempt, text string) bool {
	return a.Outcome == store.OutcomeOrphaned && a.RecoveredBy != nil &&
		text == store.RescueMessage(a.WorkerID, *a.RecoveredBy)
}

// lastWithError is the newest attempt that left an error, nil if none:
// the one the job's last error came from.
func lastWithError(as []store.Attempt) *store.Attempt {
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Error != nil {
			return &as[i]
		}
	}
	return nil
}

// pretty indents a JSON value for reading; "" for none.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		b.Reset()
		b.Write(raw)
	}
	if b.Len() > maxShownJSON {
		return string(b.Bytes()[:maxShownJSON]) + "\n… (cut: " + number(int64(b.Len())) + " bytes in all)"
	}
	return b.String()
}
