package store

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // a minimal image has no zoneinfo of its own: schedules must still load their zones

	"github.com/robfig/cron/v3"
)

// cronParser reads 5 fields (minute first), or 6 with seconds first; no
// descriptors (@daily), which would hide a second syntax behind the first.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// cronHorizon bounds the search for the next fire: an expression that
// matches no day within it (30 February) never fires. Eight years hold a
// 29 February under every rule of the calendar up to 2100's skipped leap
// year.
const cronHorizon = 9 * 366

// Cron is a parsed cron expression in its time zone. The library parses;
// Next, Tether's own, applies Unix cron's rules for daylight saving time.
type Cron struct {
	spec *cron.SpecSchedule
	loc  *time.Location
	// elapsed is true when the hour field is * or a step: such an
	// expression follows real elapsed time (it skips a wall hour that does
	// not exist and fires in both occurrences of a repeated one); one with
	// fixed hours names a local time of day.
	elapsed bool
}

// ParseCron parses expr (5 fields, or 6 with seconds first) in the IANA
// zone tz ("" is UTC). Returns a *FieldError naming "cron" or "timezone".
func ParseCron(expr, tz string) (*Cron, error) {
	loc, err := LoadZone(tz)
	if err != nil {
		return nil, err
	}
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, &FieldError{Field: "cron", Reason: "must not name a time zone: use timezone"}
	}
	fields := strings.Fields(expr)
	if n := len(fields); n != 5 && n != 6 {
		return nil, &FieldError{Field: "cron", Reason: "must have 5 fields, or 6 with seconds first"}
	}
	parsed, err := cronParser.Parse(expr)
	if err != nil {
		return nil, &FieldError{Field: "cron", Reason: err.Error()}
	}
	hour := fields[len(fields)-4]
	c := &Cron{spec: parsed.(*cron.SpecSchedule), loc: loc, elapsed: strings.ContainsAny(hour, "*/")}
	if c.Next(time.Unix(0, 0)).IsZero() {
		return nil, &FieldError{Field: "cron", Reason: "never fires"}
	}
	return c, nil
}

// LoadZone loads an IANA time zone; "" is UTC. The zone database is
// embedded, so this works on an image without one. Returns a *FieldError
// naming "timezone".
func LoadZone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	// LoadLocation also takes "Local" and file paths; neither names a zone
	// that every replica reads the same.
	if tz == "Local" || strings.ContainsAny(tz, `\`) || strings.HasPrefix(tz, "/") || strings.Contains(tz, "..") {
		return nil, &FieldError{Field: "timezone", Reason: "must be an IANA time zone name"}
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, &FieldError{Field: "timezone", Reason: "must be an IANA time zone name"}
	}
	return loc, nil
}

// FieldError is a schedule spec refused for one field, named as the API
// names it.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

// AsFieldError returns err's *FieldError, if it holds one.
func AsFieldError(err error) (*FieldError, bool) {
	var fe *FieldError
	ok := errors.As(err, &fe)
	return fe, ok
}

// Next returns the first instant strictly after t at which the expression
// fires, or the zero time if it fires on no day of the next cronHorizon.
//
// Unix cron's rules: a fixed local time that does not exist (the spring
// gap) fires at the first instant after the gap; one that occurs twice
// (the autumn overlap) fires once, at its first occurrence. An expression
// whose hour field is * or a step follows elapsed time instead: a time in
// the gap does not fire, and both occurrences of an overlap do.
func (c *Cron) Next(t time.Time) time.Time {
	local := t.In(c.loc)
	y, m, d := local.Date()
	// Start a day early: an instant of the previous local date can come
	// after t only through an overlap, and checking it costs one day.
	day := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	for range cronHorizon {
		if c.dayMatches(day) {
			if next, ok := c.nextOnDay(day, t); ok {
				return next
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

// dayMatches applies cron's day rule: day of month and day of week both
// restricted means either may match; otherwise both must.
func (c *Cron) dayMatches(day time.Time) bool {
	s := c.spec
	if s.Month&(1<<uint(day.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(day.Day())) != 0
	dow := s.Dow&(1<<uint(day.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// starBit is the bit robfig/cron sets on a field written as * (or */1).
const starBit = 1 << 63

// nextOnDay returns the earliest fire of the local date of day (a noon in
// UTC standing for the date) strictly after t. Hours and minutes whose
// every instant is at or before t are skipped whole, and the search stops
// at the first hour or minute that starts after the best fire found, so an
// expression that fires every second costs a minute's worth of checks, not
// a day's.
func (c *Cron) nextOnDay(day, t time.Time) (time.Time, bool) {
	var best time.Time
	y, mo, d := day.Date()
	past := func(mi, h int) bool { return c.bounds(y, mo, d, h, mi, 59, true).Compare(t) <= 0 }
	late := func(mi, h int) bool { return !best.IsZero() && c.bounds(y, mo, d, h, mi, 0, false).After(best) }
	for h := 0; h < 24; h++ {
		if c.spec.Hour&(1<<uint(h)) == 0 || past(59, h) {
			continue
		}
		if late(0, h) {
			break
		}
		for mi := 0; mi < 60; mi++ {
			if c.spec.Minute&(1<<uint(mi)) == 0 || past(mi, h) {
				continue
			}
			if late(mi, h) {
				break
			}
			for s := 0; s < 60; s++ {
				if c.spec.Second&(1<<uint(s)) == 0 {
					continue
				}
				for _, at := range c.fires(y, mo, d, h, mi, s) {
					if at.After(t) && (best.IsZero() || at.Before(best)) {
						best = at
					}
				}
			}
		}
	}
	return best, !best.IsZero()
}

// fires returns the instants at which the wall time fires (see Next).
func (c *Cron) fires(y int, mo time.Month, d, h, mi, s int) []time.Time {
	at := wallInstants(c.loc, y, mo, d, h, mi, s)
	switch {
	case len(at) == 0 && c.elapsed:
		return nil
	case len(at) == 0:
		return []time.Time{gapEnd(c.loc, y, mo, d, h, mi, s)}
	case len(at) == 2 && !c.elapsed:
		return at[:1]
	}
	return at
}

// bounds is the latest (or earliest) instant the wall time can stand for:
// of its occurrences in an overlap the second (the first), and the end of
// the gap for one in a gap.
func (c *Cron) bounds(y int, mo time.Month, d, h, mi, s int, latest bool) time.Time {
	at := wallInstants(c.loc, y, mo, d, h, mi, s)
	switch {
	case len(at) == 0:
		return gapEnd(c.loc, y, mo, d, h, mi, s)
	case latest:
		return at[len(at)-1]
	}
	return at[0]
}

// wallInstants returns the instants, in order, at which loc's clocks read
// the wall time: one, none (in a spring gap) or two (in an autumn overlap).
func wallInstants(loc *time.Location, y int, mo time.Month, d, h, mi, s int) []time.Time {
	u := time.Date(y, mo, d, h, mi, s, 0, time.UTC).Unix()
	var out []time.Time
	seen := map[int]bool{}
	// The offsets in force a day either side: no zone changes twice in two
	// days.
	for _, probe := range []int64{u - 86400, u, u + 86400} {
		_, off := time.Unix(probe, 0).In(loc).Zone()
		if seen[off] {
			continue
		}
		seen[off] = true
		at := time.Unix(u-int64(off), 0).In(loc)
		if _, o := at.Zone(); o == off {
			out = append(out, at.UTC())
		}
	}
	if len(out) == 2 && out[1].Before(out[0]) {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// gapEnd is the first instant after the spring gap that holds the wall
// time (which wallInstants found nowhere).
func gapEnd(loc *time.Location, y int, mo time.Month, d, h, mi, s int) time.Time {
	u := time.Date(y, mo, d, h, mi, s, 0, time.UTC).Unix()
	// Read with the offset in force before the gap, the wall time falls
	// after the change; its zone began at the gap's end.
	_, before := time.Unix(u-86400, 0).In(loc).Zone()
	start, _ := time.Unix(u-int64(before), 0).In(loc).ZoneBounds()
	return start.UTC()
}
