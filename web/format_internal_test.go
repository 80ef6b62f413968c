package web

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

func TestRelative(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		ago  time.Duration // how long before now
		want string
	}{
		{0, "just now"},
		{999 * time.Millisecond, "just now"},
		{12 * time.Second, "12 s ago"},
		{3*time.Minute + 59*time.Second, "3 min ago"},
		{5 * time.Hour, "5 h ago"},
		{72 * time.Hour, "3 d ago"},
		{-90 * time.Second, "in 1 min"},
	} {
		if got := relative(now.Add(-tt.ago), now); got != tt.want {
			t.Errorf("relative(now - %s) = %q, want %q", tt.ago, got, tt.want)
		}
	}
}

func TestSpan(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{350 * time.Millisecond, "350 ms"},
		{2 * time.Second, "2 s"},
		{2400 * time.Millisecond, "2.4 s"},
		{42 * time.Second, "42 s"},
		{30 * time.Minute, "30 min"},
		{3*time.Minute + 5*time.Second, "3 min 5 s"},
		{2*time.Hour + 10*time.Minute, "2 h 10 min"},
		{-time.Second, "—"},
	} {
		if got := span(tt.d); got != tt.want {
			t.Errorf("span(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := number(n); got != want {
			t.Errorf("number(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSafeBack(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ back, want string }{
		{"/dead?queue=a", "/dead?queue=a"},
		{"/jobs#top", "/jobs"},
		{"", "/def"},
		{"https://evil.example/", "/def"},
		{"//evil.example/", "/def"},
		{"/\\evil.example/", "/def"},
		{"javascript:alert(1)", "/def"},
		{"dead", "/def"},
	} {
		if got := safeBack(tt.back, "/def"); got != tt.want {
			t.Errorf("safeBack(%q) = %q, want %q", tt.back, got, tt.want)
		}
	}
}

func TestLayoutChart(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	mins := make([]store.ThroughputMinute, 60)
	for i := range mins {
		mins[i].Minute = base.Add(time.Duration(i) * time.Minute)
	}
	mins[10] = store.ThroughputMinute{Minute: mins[10].Minute, Succeeded: 30, Failed: 7, Rescued: 1}
	m := layoutChart(mins)
	if m.Axis.Top != 40 || m.Succeeded != 30 || m.Failed != 7 || m.Rescued != 1 || m.Quiet {
		t.Errorf("chart = top %d totals %d/%d/%d quiet %v", m.Axis.Top, m.Succeeded, m.Failed, m.Rescued, m.Quiet)
	}
	if len(m.Bars) != 60 || len(m.Bars[10].Segs) != 3 || m.Bars[0].Segs[0].Class != "bar-none" {
		t.Errorf("bars: %d, minute 10 has %d segments", len(m.Bars), len(m.Bars[10].Segs))
	}
	if q := layoutChart(mins[:1]); !q.Quiet {
		t.Error("an empty hour is not quiet")
	}
	for n, want := range map[int64]int64{1: 1, 2: 2, 3: 5, 7: 10, 11: 20, 4999: 5000} {
		if got := niceCeil(n); got != want {
			t.Errorf("niceCeil(%d) = %d, want %d", n, got, want)
		}
	}
}
