package store

import "time"

// TimeLayout is how Tether writes an instant for people and programs alike:
// RFC 3339 in UTC with exactly millisecond precision, the precision every
// backend stores.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime writes t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }
