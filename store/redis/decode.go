package redis

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/tetherq/tether/store"
)

// Job hash fields, as the scripts name them. Short names keep a waiting job's
// hash small enough for Redis's compact (listpack) encoding.
const (
	fQueue      = "q"
	fKind       = "k"
	fState      = "s"
	fPriority   = "p"
	fAttempt    = "a"
	fMaxAtt     = "ma"
	fTimeout    = "to"
	fBackBase   = "bb"
	fBackMax    = "bm"
	fRunAt      = "ra"
	fCreated    = "ca"
	fStarted    = "sa"
	fFinished   = "fa"
	fUnique     = "uk"
	fTags       = "tg"
	fMetadata   = "md"
	fLastError  = "le"
	fResult     = "rs"
	fProgress   = "pr"
	fCancel     = "cr"
	fRescues    = "rc"
	fDeadReason = "dr"
	fWorker     = "w"
	fToken      = "t"
	fExpires    = "ex"
	fAttemptID  = "ai"
	fPayload    = "pl"
	fTraceP     = "tp"
	fTraceS     = "ts"
	fConcKey    = "ck"
	fSchedule   = "sc"
	fSlot       = "sf"
)

// decodeJob reads a job as lib_job.lua's reply gives it: {id, field/value
// pairs, payload kept in its own key or nil}.
func decodeJob(v any) (*store.Job, map[string]string, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 1 {
		return nil, nil, fmt.Errorf("redis: unexpected job reply %v", v)
	}
	id, _ := a[0].(string)
	if len(a) < 3 {
		return &store.Job{ID: id}, nil, nil // only the id is left (a pruned job)
	}
	pairs, _ := a[1].([]any)
	f := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		k, _ := pairs[i].(string)
		v, _ := pairs[i+1].(string)
		f[k] = v
	}
	return jobFromFields(id, f, a[2]), f, nil
}

// jobFromFields builds job id from its hash's fields f and its payload
// when kept in its own key (a string; anything else when not).
func jobFromFields(id string, f map[string]string, payload any) *store.Job {
	j := &store.Job{
		ID:          id,
		Queue:       f[fQueue],
		Kind:        f[fKind],
		Priority:    atoi(f[fPriority]),
		State:       store.State(f[fState]),
		Attempt:     atoi(f[fAttempt]),
		MaxAttempts: atoi(f[fMaxAtt]),
		Timeout:     msDur(f[fTimeout]),
		Backoff:     store.Backoff{Base: msDur(f[fBackBase]), Max: msDur(f[fBackMax])},
		RunAt:       msTime(f[fRunAt]),
		CreatedAt:   msTime(f[fCreated]),
		StartedAt:   optTime(f, fStarted),
		FinishedAt:  optTime(f, fFinished),
		UniqueKey:   optStr(f, fUnique),
		Tags:        []string{},
		Metadata:    json.RawMessage("{}"),
		LastError:   optStr(f, fLastError),
		Result:      optRaw(f, fResult),
		Rescues:     atoi(f[fRescues]),
		// concurrency_key is 1..255 characters: "" is none.
		ConcurrencyKey: optStr(f, fConcKey),
	}
	if p, ok := payload.(string); ok {
		j.Payload = json.RawMessage(p)
	} else {
		j.Payload = optRaw(f, fPayload)
	}
	if tg, ok := f[fTags]; ok {
		if err := json.Unmarshal([]byte(tg), &j.Tags); err != nil || j.Tags == nil {
			j.Tags = []string{}
		}
	}
	if md, ok := f[fMetadata]; ok {
		j.Metadata = json.RawMessage(md)
	}
	if pr, ok := f[fProgress]; ok {
		p := atoi(pr)
		j.Progress = &p
	}
	j.CancelRequested = f[fCancel] == "1"
	if dr, ok := f[fDeadReason]; ok {
		r := store.DeadReason(dr)
		j.DeadReason = &r
	}
	if j.State == store.StateRunning {
		j.Lease = &store.Lease{WorkerID: f[fWorker], Token: f[fToken], ExpiresAt: msTime(f[fExpires])}
	}
	if tp, ok := f[fTraceP]; ok {
		j.Trace = &store.Trace{Parent: tp, State: f[fTraceS]}
	}
	j.Schedule, j.ScheduledFor = optStr(f, fSchedule), optTime(f, fSlot)
	return j
}

// attemptEntry is a closed attempt as lib_end.lua's close_attempt writes it;
// numbers are kept as the strings the job hash held.
type attemptEntry struct {
	ID          string  `json:"i"`
	Attempt     string  `json:"n"`
	WorkerID    string  `json:"w"`
	StartedAt   string  `json:"s"`
	FinishedAt  string  `json:"f"`
	Outcome     string  `json:"o"`
	Error       *string `json:"e"`
	RecoveredBy *string `json:"rb"`
	LastHB      *string `json:"lh"`
}

func decodeAttempts(j *store.Job, f map[string]string, entries []any) error {
	j.Attempts = make([]store.Attempt, 0, len(entries)+1)
	for _, e := range entries {
		text, _ := e.(string)
		var a attemptEntry
		if err := json.Unmarshal([]byte(text), &a); err != nil {
			return fmt.Errorf("attempt of %s: %w", j.ID, err)
		}
		finished := msTime(a.FinishedAt)
		at := store.Attempt{
			ID: a.ID, JobID: j.ID, Attempt: atoi(a.Attempt), WorkerID: a.WorkerID,
			StartedAt: msTime(a.StartedAt), FinishedAt: &finished, Outcome: store.Outcome(a.Outcome),
			Error: a.Error, RecoveredBy: a.RecoveredBy,
		}
		if a.LastHB != nil {
			t := msTime(*a.LastHB)
			at.LastHeartbeatAt = &t
		}
		j.Attempts = append(j.Attempts, at)
	}
	// The open attempt of a running job, and the attempt that settled a
	// succeeded one, live on the job (lib_ack.lua).
	switch j.State {
	case store.StateRunning:
		j.Attempts = append(j.Attempts, store.Attempt{
			ID: f[fAttemptID], JobID: j.ID, Attempt: j.Attempt, WorkerID: f[fWorker],
			StartedAt: msTime(f[fStarted]), Outcome: store.OutcomeRunning,
		})
	case store.StateSucceeded:
		j.Attempts = append(j.Attempts, store.Attempt{
			ID: f[fAttemptID], JobID: j.ID, Attempt: j.Attempt, WorkerID: f[fWorker],
			StartedAt: msTime(f[fStarted]), FinishedAt: j.FinishedAt, Outcome: store.OutcomeSucceeded,
		})
	}
	j.Attempts = store.NewestAttempts(j.Attempts)
	return nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func fromMS(n int64) time.Time { return time.UnixMilli(n).UTC() }

func unixMS(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func msTime(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return fromMS(n)
}

func msDur(s string) time.Duration {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Duration(n) * time.Millisecond
}

// msFloat writes a duration in ms, fractions kept, so a script's "delay
// <= 0" test sees what store.Decide sees.
func msFloat(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

func optTime(f map[string]string, k string) *time.Time {
	v, ok := f[k]
	if !ok {
		return nil
	}
	t := msTime(v)
	return &t
}

func optStr(f map[string]string, k string) *string {
	v, ok := f[k]
	if !ok {
		return nil
	}
	return &v
}

func optRaw(f map[string]string, k string) json.RawMessage {
	v, ok := f[k]
	if !ok {
		return nil
	}
	return json.RawMessage(v)
}

// asSlice and asString read script replies.
func asSlice(v any) []any {
	a, _ := v.([]any)
	return a
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}
