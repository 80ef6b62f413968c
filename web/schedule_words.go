package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// scheduleWords says when a schedule fires, in words, for the common
// shapes of cron expression: a fixed time every day, on some weekdays or
// on one day of the month, every n minutes or hours. Any other expression
// reads as itself ("cron 5 4 1-7 * 1"); the page shows the expression
// beside the words either way.
func scheduleWords(s *store.ScheduleSpec) string {
	if s.Cron == "" {
		return "every " + everyWords(s.Every)
	}
	f := strings.Fields(s.Cron)
	if len(f) == 6 {
		if f[0] != "0" {
			return "cron " + s.Cron
		}
		f = f[1:]
	}
	if len(f) != 5 || f[3] != "*" {
		return "cron " + s.Cron
	}
	minute, hour, dom, dow := f[0], f[1], f[2], f[4]
	if dom != "*" && dow != "*" {
		return "cron " + s.Cron
	}
	if n, ok := stepOf(minute); ok && hour == "*" && dom == "*" && dow == "*" {
		return "every " + countWords(n, "minute")
	}
	if isNum(minute) && hour == "*" && dom == "*" && dow == "*" {
		return "every hour at minute " + minute
	}
	if n, ok := stepOf(hour); ok && isNum(minute) && dom == "*" && dow == "*" {
		return fmt.Sprintf("every %s at minute %s", countWords(n, "hour"), minute)
	}
	if !isNum(minute) || !isNum(hour) {
		return "cron " + s.Cron
	}
	m, _ := strconv.Atoi(minute)
	h, _ := strconv.Atoi(hour)
	at := fmt.Sprintf("at %02d:%02d", h, m)
	switch {
	case dom == "*" && dow == "*":
		return at + " every day"
	case dow == "*" && isNum(dom):
		return at + " on day " + dom + " of every month"
	case dom == "*":
		if days, ok := weekdays(dow); ok {
			return at + " on " + days
		}
	}
	return "cron " + s.Cron
}

// stepOf reads "*" (1) or "*/n".
func stepOf(field string) (int, bool) {
	if field == "*" {
		return 1, true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(field, "*/"))
	return n, err == nil && strings.HasPrefix(field, "*/") && n > 0
}

func isNum(field string) bool {
	_, err := strconv.Atoi(field)
	return err == nil
}

func countWords(n int, unit string) string {
	if n == 1 {
		return unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

var dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// weekdays reads a day-of-week field of numbers (0 and 7 are Sunday),
// ranges and lists: "1-5" is "Monday to Friday", "1,3" "Monday and
// Wednesday".
func weekdays(field string) (string, bool) {
	var parts []string
	for _, item := range strings.Split(field, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		a, errA := strconv.Atoi(lo)
		if errA != nil || a < 0 || a > 7 {
			return "", false
		}
		if !isRange {
			parts = append(parts, dayNames[a])
			continue
		}
		b, errB := strconv.Atoi(hi)
		if errB != nil || b <= a || b > 7 {
			return "", false
		}
		parts = append(parts, dayNames[a]+" to "+dayNames[b])
	}
	if len(parts) == 1 {
		return parts[0], true
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1], true
}

// everyWords says an interval in its largest whole unit.
func everyWords(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if d >= u.d && d%u.d == 0 {
			return countWords(int(d/u.d), u.name)
		}
	}
	return d.String()
}
