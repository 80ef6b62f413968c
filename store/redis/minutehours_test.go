package redis_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/storetest"
)

// finishedBy lists queue q's rolled minutes over three hours from start,
// by step, as "hh:mm kind succeeded/dead" summed per hour.
func finishedBy(t *testing.T, s *redis.Store, q string, start time.Time, step time.Duration) string {
	t.Helper()
	got, err := s.QueueMinuteList(t.Context(), &store.QueueMinuteListParams{Queue: q, Since: start,
		Until: start.Add(3 * time.Hour), Step: step})
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	var keys []string
	for _, m := range got {
		k := m.Minute.Truncate(time.Hour).Format("15:04") + " " + m.Kind
		if _, ok := sums[k]; !ok {
			keys = append(keys, k)
		}
		sums[k] += m.Succeeded
	}
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %d", k, sums[k]))
	}
	return strings.Join(out, ", ")
}

// deepestBy lists queue q's depth over three hours from start, by step, as
// "hh:mm available/scheduled".
func deepestBy(t *testing.T, s *redis.Store, q string, start time.Time, step time.Duration) string {
	t.Helper()
	got, err := s.QueueDepthList(t.Context(), &store.QueueDepthListParams{Queue: q, Since: start,
		Until: start.Add(3 * time.Hour), Step: step})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range got {
		out = append(out, fmt.Sprintf("%s %d/%d", d.Minute.Format("15:04"), d.Available, d.Scheduled))
	}
	return strings.Join(out, ", ")
}

// TestMinuteHoursUpgrade: a store an earlier version wrote has rolled
// minutes and depth samples but no hours of them, and a list by the hour
// reads the hours. Open builds them from the minutes and records it.
func TestMinuteHoursUpgrade(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	s := open(t, url, "")
	ctx := t.Context()
	start := storetest.Base.Truncate(time.Hour).Add(time.Hour)
	for _, m := range []int{1, 30, 61, 150} {
		at := start.Add(time.Duration(m) * time.Minute)
		for _, kind := range []string{"a", "b"} {
			if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: kind, Queue: "q"}}, Now: at}); err != nil {
				t.Fatal(err)
			}
			j, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"q"}, Max: 1, Now: at})
			if err != nil || len(j) != 1 {
				t.Fatalf("lease: %v, %v", j, err)
			}
			if _, err := s.JobAck(ctx, &store.JobAckParams{ID: j[0].ID, Token: j[0].Lease.Token, Now: at}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.QueueMinuteRoll(ctx, &store.QueueMinuteRollParams{Minute: at, Now: at}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.QueueDepthRoll(ctx, &store.QueueDepthRollParams{
			Depths: []store.QueueDepth{{Queue: "q", Available: int64(m), Scheduled: 1}}, Now: at}); err != nil {
			t.Fatal(err)
		}
	}
	want, wantDepth := finishedBy(t, s, "q", start, 0), deepestBy(t, s, "q", start, time.Hour)
	if want == "" || finishedBy(t, s, "q", start, time.Hour) != want || wantDepth != "04:30 30/1, 05:01 61/1, 06:30 150/1" {
		t.Fatalf("before the upgrade: by the hour %q and %q, by the minute %q", finishedBy(t, s, "q", start, time.Hour),
			wantDepth, want)
	}
	p, c := s.PrefixForTest(), raw(t, url)
	if err := c.Del(ctx, p+"{q}:hr", p+"{q}:dh").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.SRem(ctx, p+"migrations", "minute-hours").Err(); err != nil {
		t.Fatal(err)
	}
	if got := finishedBy(t, s, "q", start, time.Hour); got == want {
		t.Fatalf("without the hour sums, by the hour still %q", got)
	}
	if got := deepestBy(t, s, "q", start, time.Hour); got == wantDepth {
		t.Fatalf("without the deepest samples by the hour, still %q", got)
	}
	s = open(t, url, p)
	if got := finishedBy(t, s, "q", start, time.Hour); got != want {
		t.Errorf("after the upgrade, by the hour %q, want %q", got, want)
	}
	if got := deepestBy(t, s, "q", start, time.Hour); got != wantDepth {
		t.Errorf("after the upgrade, the depth by the hour %q, want %q", got, wantDepth)
	}
	if done, _ := c.SIsMember(ctx, p+"migrations", "minute-hours").Result(); !done {
		t.Error("the build is not recorded in migrations")
	}
}
