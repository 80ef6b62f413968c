package store

import (
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// TestCronNext walks the next fires of expressions through both 2026 US
// transitions (New York: spring forward 8 March at 02:00, fall back 1
// November at 02:00) and Sydney's (fall back 5 April at 03:00, spring
// forward 4 October at 02:00), in fixed-hour and elapsed-time forms.
func TestCronNext(t *testing.T) {
	tests := []struct {
		name, expr, tz, from string
		want                 []string // the next fires, in order
	}{
		{"fixed time across the NY spring gap", "30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z",
			// 02:30 on 8 March does not exist: the first instant after the gap (03:00 EDT).
			[]string{"2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"fixed time in the NY autumn overlap fires once", "30 1 * * *", "America/New_York", "2026-10-31T00:00:00Z",
			// 01:30 EDT on 1 November, not 01:30 EST an hour later.
			[]string{"2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"elapsed hours skip the NY gap", "30 * * * *", "America/New_York", "2026-03-08T05:00:00Z",
			// 00:30 EST, 01:30 EST, (no 02:30), 03:30 EDT
			[]string{"2026-03-08T05:30:00Z", "2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z"}},
		{"elapsed hours fire in both NY overlaps", "30 * * * *", "America/New_York", "2026-11-01T04:00:00Z",
			// 00:30 EDT, 01:30 EDT, 01:30 EST, 02:30 EST
			[]string{"2026-11-01T04:30:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-01T07:30:00Z"}},
		{"a step in the hour field follows elapsed time", "0 */1 * * *", "America/New_York", "2026-11-01T04:30:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}},
		{"fixed time in the Sydney overlap fires once", "30 2 * * *", "Australia/Sydney", "2026-04-03T00:00:00Z",
			// 02:30 AEDT (+11) on 5 April, not 02:30 AEST (+10) an hour later.
			[]string{"2026-04-03T15:30:00Z", "2026-04-04T15:30:00Z", "2026-04-05T16:30:00Z"}},
		{"fixed time in the Sydney gap", "30 2 * * *", "Australia/Sydney", "2026-10-02T12:00:00Z",
			// 02:30 on 4 October does not exist: 03:00 AEDT.
			[]string{"2026-10-02T16:30:00Z", "2026-10-03T16:00:00Z", "2026-10-04T15:30:00Z"}},
		{"two gap times and the gap's end are one fire", "0,30 2,3 * * *", "Australia/Sydney", "2026-10-03T15:00:00Z",
			[]string{"2026-10-03T16:00:00Z", "2026-10-03T16:30:00Z", "2026-10-04T15:00:00Z"}},
		{"seconds field", "*/20 * * * * *", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T00:00:20Z", "2026-01-01T00:00:40Z", "2026-01-01T00:01:00Z"}},
		{"day of month or day of week", "0 9 13 * 5", "UTC", "2026-02-01T00:00:00Z",
			// Fridays, and the 13th (a Friday in February 2026).
			[]string{"2026-02-06T09:00:00Z", "2026-02-13T09:00:00Z", "2026-02-20T09:00:00Z"}},
		{"day of month and any weekday", "0 0 29 2 *", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"instant strictly after", "0 12 * * *", "", "2026-01-01T12:00:00Z",
			[]string{"2026-01-02T12:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCron(tc.expr, tc.tz)
			if err != nil {
				t.Fatal(err)
			}
			at := utc(tc.from)
			for i, w := range tc.want {
				at = c.Next(at)
				if !at.Equal(utc(w)) {
					t.Fatalf("fire %d = %s, want %s", i, at.Format(time.RFC3339), w)
				}
			}
		})
	}
}

// An expression firing every second costs little per Next: a day of them
// would take far longer than the bound if each call walked the day.
func TestCronNextEverySecondIsCheap(t *testing.T) {
	c, err := ParseCron("* * * * * *", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := utc("2026-03-29T00:59:58Z") // Berlin springs forward at 01:00Z
	for i := range 4000 {
		next := c.Next(at)
		if next.Sub(at) != time.Second {
			t.Fatalf("step %d: %s → %s", i, at, next)
		}
		at = next
	}
}

func TestParseCronErrors(t *testing.T) {
	tests := []struct{ expr, tz, field string }{
		{"* * * *", "", "cron"},
		{"* * * * * * *", "", "cron"},
		{"61 * * * *", "", "cron"},
		{"TZ=UTC * * * * *", "", "cron"},
		{"@daily", "", "cron"},
		{"0 0 30 2 *", "", "cron"}, // never fires
		{"* * * * *", "Mars/Olympus", "timezone"},
		{"* * * * *", "Local", "timezone"},
		{"* * * * *", "/etc/localtime", "timezone"},
		{"* * * * *", "../UTC", "timezone"},
	}
	for _, tc := range tests {
		_, err := ParseCron(tc.expr, tc.tz)
		fe, ok := AsFieldError(err)
		if !ok || fe.Field != tc.field {
			t.Errorf("ParseCron(%q, %q) = %v, want an error naming %s", tc.expr, tc.tz, err, tc.field)
		}
	}
}
