package api

import (
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tetherq/tether/store"
)

// fieldError is a 400 invalid_request naming the offending field ("" for
// the body as a whole).
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + " " + e.msg
}

// invalid returns a *fieldError for field.
func invalid(field, format string, args ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// Limits of API.md's value-range table, plus the sizes of lists it leaves
// open (lease queues and kinds, labels, in-flight ids).
const (
	maxWorkerIDLen   = 200
	maxPriority      = 1000
	maxMaxAttempts   = 1000
	maxTimeoutMS     = 86_400_000
	maxBackoffMS     = 604_800_000
	maxDelayMS       = 31_536_000_000
	maxKeyLen        = 255
	maxTags          = 32
	maxTagLen        = 64
	maxLeaseMax      = store.MaxBatch
	maxWaitMS        = 30_000
	maxItems         = store.MaxBatch // batch enqueue and settle
	maxListLimit     = store.MaxBatch
	defaultListLimit = store.DefaultListLimit
	maxNames         = 100 // queues and kinds named in one lease or registration
	maxLabels        = 64
	maxLabelKeyLen   = 128
	maxLabelValueLen = 1024
	maxTokenLen      = 1024
)

// firstErr returns the first non-nil error, so a handler can list every
// check in order.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// when reports field as invalid with msg if bad holds.
func when(bad bool, field, msg string) error {
	if bad {
		return &fieldError{field: field, msg: msg}
	}
	return nil
}

// checkName checks a queue, kind or hook name (store.ValidName).
func checkName(field, v string) error {
	if !store.ValidName(v) {
		return invalid(field, "must be "+store.NameRule)
	}
	return nil
}

// checkNames checks a list of names of 1..maxNames items (0.. if optional).
func checkNames(field string, vs []string, required bool) error {
	if required && len(vs) == 0 {
		return invalid(field, "is required and must not be empty")
	}
	if len(vs) > maxNames {
		return invalid(field, "must have at most %d items", maxNames)
	}
	for i, v := range vs {
		if err := checkName(fmt.Sprintf("%s[%d]", field, i), v); err != nil {
			return err
		}
	}
	return nil
}

// checkWorkerID checks an opaque worker id: 1..200 printable characters.
func checkWorkerID(field, v string) error {
	n := utf8.RuneCountInString(v)
	if n < 1 || n > maxWorkerIDLen || !utf8.ValidString(v) {
		return invalid(field, "must be 1..%d characters", maxWorkerIDLen)
	}
	for _, c := range v {
		if !unicode.IsPrint(c) {
			return invalid(field, "must contain printable characters only")
		}
	}
	return nil
}

// checkLen checks that v has lo..hi characters.
func checkLen(field, v string, lo, hi int) error {
	if n := utf8.RuneCountInString(v); n < lo || n > hi || !utf8.ValidString(v) {
		return invalid(field, "must be %d..%d characters", lo, hi)
	}
	return nil
}

// checkRange checks an optional integer; nil passes.
func checkRange[T int | int64](field string, v *T, lo, hi T) error {
	if v != nil && (*v < lo || *v > hi) {
		return invalid(field, "must be in %d..%d", lo, hi)
	}
	return nil
}

// required reports a missing field.
func required[T any](field string, v *T) error {
	if v == nil {
		return invalid(field, "is required")
	}
	return nil
}

// checkTags checks up to maxTags tags of 1..maxTagLen characters.
func checkTags(field string, tags []string) error {
	if len(tags) > maxTags {
		return invalid(field, "must have at most %d items", maxTags)
	}
	for i, t := range tags {
		if err := checkLen(fmt.Sprintf("%s[%d]", field, i), t, 1, maxTagLen); err != nil {
			return err
		}
	}
	return nil
}

// checkLabels checks worker labels.
func checkLabels(field string, labels map[string]string) error {
	if len(labels) > maxLabels {
		return invalid(field, "must have at most %d entries", maxLabels)
	}
	for k, v := range labels {
		if err := firstErr(
			checkLen(field+"."+k, k, 1, maxLabelKeyLen),
			checkLen(field+"."+k, v, 0, maxLabelValueLen),
		); err != nil {
			return err
		}
	}
	return nil
}

// checkToken checks a lease token's shape; whether it is current is the
// store's answer.
func checkToken(field string, v *string) error {
	if v == nil {
		return invalid(field, "is required")
	}
	return checkLen(field, *v, 1, maxTokenLen)
}

// millis converts a validated millisecond count.
func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
