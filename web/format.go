package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// instant is a time as the dashboard shows it: relative to the render
// ("12 s ago", "in 3 min") with the absolute time in RFC 3339 (ms, UTC) for
// the title and the datetime attribute, which the script keeps current.
type instant struct {
	Valid bool
	Abs   string
	Rel   string
}

func instantAt(t, now time.Time) instant {
	if t.IsZero() {
		return instant{}
	}
	return instant{Valid: true, Abs: store.FormatTime(t), Rel: relative(t, now)}
}

func instantOf(t *time.Time, now time.Time) instant {
	if t == nil {
		return instant{}
	}
	return instantAt(*t, now)
}

// relative says how far t is from now in words.
func relative(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d > -time.Second && d < time.Second:
		return "just now"
	case d < 0:
		return "in " + roughly(-d)
	default:
		return roughly(d) + " ago"
	}
}

// roughly is d in its largest unit: "12 s", "3 min", "5 h", "2 d".
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + " d"
	}
}

// span is a measured duration, more precise than roughly: "350 ms",
// "2.4 s", "3 min 5 s", "2 h 10 min".
func span(d time.Duration) string {
	switch {
	case d < 0:
		return "—"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < 10*time.Second && d%time.Second != 0:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + " s"
	case d < time.Hour:
		m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
		if s == 0 {
			return fmt.Sprintf("%d min", m)
		}
		return fmt.Sprintf("%d min %d s", m, s)
	default:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
}

// stateLabel is the state a job shows at now: "retrying" for a scheduled
// job waiting out a backoff (store.Job.RetryingAt), else its state as every
// answer reads it (store.Job.StateAt). Actions still follow the state.
func stateLabel(j *store.Job, now time.Time) string {
	if j.RetryingAt(now) {
		return "retrying"
	}
	return string(j.StateAt(now))
}

// number writes n with thousands separators: 1,000,000.
func number(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// shortID is the part of a UUIDv7 that tells jobs apart at a glance: its
// random tail, since ids created together share their time prefix.
func shortID(id string) string {
	if len(id) == 36 {
		return id[:8] + "…" + id[len(id)-6:]
	}
	return id
}

// clip cuts s to n runes with an ellipsis, for one-line table cells.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// percent is v of total as a CSS width, at least a sliver when v > 0.
func percent(v, total int64) string {
	if total <= 0 || v <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(math.Max(0.5, float64(v)*100/float64(total)), 'f', 2, 64) + "%"
}
