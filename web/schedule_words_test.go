package web

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

func TestScheduleWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cron  string        // or
		every time.Duration // when cron is ""
		want  string
	}{
		{"", time.Second, "every second"},
		{"", 90 * time.Second, "every 90 seconds"},
		{"", 5 * time.Minute, "every 5 minutes"},
		{"", 2 * time.Hour, "every 2 hours"},
		{"", 24 * time.Hour, "every day"},
		{"", 1500 * time.Millisecond, "every 1.5s"},
		{"* * * * *", 0, "every minute"},
		{"*/15 * * * *", 0, "every 15 minutes"},
		{"7 * * * *", 0, "every hour at minute 7"},
		{"0 */6 * * *", 0, "every 6 hours at minute 0"},
		{"0 2 * * *", 0, "at 02:00 every day"},
		{"30 14 1 * *", 0, "at 14:30 on day 1 of every month"},
		{"0 9 * * 1-5", 0, "at 09:00 on Monday to Friday"},
		{"0 9 * * 0,3,6", 0, "at 09:00 on Sunday, Wednesday and Saturday"},
		{"0 9 * * 7", 0, "at 09:00 on Sunday"},
		{"0 0 2 * * *", 0, "at 02:00 every day"}, // seconds first, 0
		{"*/10 * * * * *", 0, "cron */10 * * * * *"},
		{"5 4 1-7 * 1", 0, "cron 5 4 1-7 * 1"},
		{"0 9 * * MON", 0, "cron 0 9 * * MON"},
		{"0 9 * 1 *", 0, "cron 0 9 * 1 *"},
		{"0 9-17 * * *", 0, "cron 0 9-17 * * *"},
		{"0 9 * * 5-1", 0, "cron 0 9 * * 5-1"},
	}
	for _, tt := range tests {
		s := &store.ScheduleSpec{Cron: tt.cron, Every: tt.every}
		if got := scheduleWords(s); got != tt.want {
			t.Errorf("scheduleWords(%q, %v) = %q, want %q", tt.cron, tt.every, got, tt.want)
		}
	}
}
