package main

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// Process tests of schedules: three replicas sharing a store fire each
// slot of a schedule once, whichever of them dies, and after every
// replica was down each catch-up policy fires what API.md says. The test
// reads the store itself (openStore on the same URL) to see what fired.

// slot is a schedule's every_ms in these tests.
const slot = time.Second

// Three replicas fire every second while one is SIGKILLed midway: the
// jobs' scheduled_for are distinct and one second apart, none missed; an
// overlap-skip schedule with no worker never has two unfinished jobs.
func TestScheduleReplicasFireEachSlotOnce(t *testing.T) {
	eachSharedStore(t, testScheduleReplicas)
}

func testScheduleReplicas(t *testing.T, storeURL string) {
	// catchup all: a slot whose tick comes late on a loaded machine is
	// still fired (as a catch-up), so a gap can only mean a lost slot.
	file := scheduleFile(t, `{"schedules": [
		{"name": "every-second", "every_ms": 1000, "catchup": "all", "job": {"kind": "tick", "queue": "sched"}},
		{"name": "skip", "every_ms": 1000, "overlap": "skip", "job": {"kind": "tick", "queue": "nobody"}}]}`)
	replicas := startScheduleReplicas(t, storeURL, file)
	st := openTestStore(t, storeURL)

	waitJobs(t, st, "every-second", 3)
	if err := replicas[1].signal(t, syscall.SIGKILL); err == nil {
		t.Fatal("the SIGKILLed replica exited cleanly")
	}
	waitJobs(t, st, "every-second", 11)
	for _, name := range []string{"every-second", "skip"} {
		pauseSchedule(t, replicas[0].url, name)
	}

	s := getSchedule(t, st, "every-second")
	slots := jobSlots(t, st, "every-second")
	if s.Version != 2 { // the file written once by three replicas, then the pause
		t.Errorf("version %d, want 2: three replicas wrote the file %d times", s.Version, s.Version-1)
	}
	if int64(len(slots)) != s.FiresTotal || s.MissedTotal != 0 || s.SkippedTotal != 0 {
		t.Errorf("%d jobs; fires_total %d missed_total %d skipped_total %d, want fires = jobs and none missed",
			len(slots), s.FiresTotal, s.MissedTotal, s.SkippedTotal)
	}
	t.Logf("every-second: %d jobs, fires_total %d, missed_total %d; skip: %d fires, %d skipped",
		len(slots), s.FiresTotal, s.MissedTotal, getSchedule(t, st, "skip").FiresTotal, getSchedule(t, st, "skip").SkippedTotal)
	for i := 1; i < len(slots); i++ {
		if d := slots[i].Sub(slots[i-1]); d != slot {
			t.Errorf("slots %s and %s are %v apart, want %v (each slot once, none skipped)",
				slots[i-1].Format(time.RFC3339Nano), slots[i].Format(time.RFC3339Nano), d, slot)
		}
	}

	skip := getSchedule(t, st, "skip")
	if n := len(jobSlots(t, st, "skip")); n != 1 || skip.FiresTotal != 1 || skip.SkippedTotal < 3 {
		t.Errorf("overlap skip with no worker: %d jobs, fires_total %d skipped_total %d; want 1, 1, and the rest skipped",
			n, skip.FiresTotal, skip.SkippedTotal)
	}
}

// Every replica is SIGKILLed, stays down for five slots, and restarts:
// the first fire after it catches up what each policy says (none: no
// missed slot, latest: the newest, all: the newest max_catchup, oldest
// first), counts the others in missed_total, and from then on each slot
// fires once. The restart leaves the file's schedules as they were.
func TestScheduleCatchupAfterDowntime(t *testing.T) {
	eachSharedStore(t, testScheduleCatchup)
}

func testScheduleCatchup(t *testing.T, storeURL string) {
	const maxCatchup = 3
	file := scheduleFile(t, `{"schedules": [
		{"name": "none", "every_ms": 1000, "catchup": "none", "job": {"kind": "k"}},
		{"name": "latest", "every_ms": 1000, "catchup": "latest", "job": {"kind": "k"}},
		{"name": "all", "every_ms": 1000, "catchup": "all", "max_catchup": 3, "job": {"kind": "k"}}]}`)
	policies := map[string]int{"none": 0, "latest": 1, "all": maxCatchup} // the catch-up jobs each fires
	replicas := startScheduleReplicas(t, storeURL, file)
	st := openTestStore(t, storeURL)
	for name := range policies {
		waitJobs(t, st, name, 2)
	}
	for _, r := range replicas {
		_ = r.signal(t, syscall.SIGKILL)
	}
	before := map[string]*store.Schedule{}
	for name := range policies {
		before[name] = getSchedule(t, st, name)
	}
	// The downtime itself: five slots with no replica, so that more slots
	// are missed than "all" may catch up. Longer only misses more.
	time.Sleep(5 * slot)
	replicas = startScheduleReplicas(t, storeURL, file)
	for name := range policies {
		waitJobs(t, st, name, int(before[name].FiresTotal)+maxCatchup+3)
	}
	for name := range policies {
		pauseSchedule(t, replicas[0].url, name)
	}

	for name, catchup := range policies {
		b, s := before[name], getSchedule(t, st, name)
		if s.Version != b.Version+1 {
			t.Errorf("%s: version %d, want %d (the pause alone): the restart rewrote the file", name, s.Version, b.Version+1)
		}
		jobs := listScheduleJobs(t, st, name)
		var after []*store.Job // fired after the restart, oldest slot first
		for _, j := range jobs {
			if !j.ScheduledFor.Before(b.NextFireAt) {
				after = append(after, j)
			}
		}
		if int64(len(jobs)-len(after)) != b.FiresTotal {
			t.Errorf("%s: %d jobs before the downtime, fires_total was %d", name, len(jobs)-len(after), b.FiresTotal)
		}
		// The first fire after the restart inserts its jobs at one instant:
		// its catch-up jobs are those not on time, a tick (200 ms) or more
		// before it.
		first := after[0].CreatedAt
		var caught, onTime []time.Time
		for _, j := range after {
			switch {
			case j.CreatedAt.Equal(first) && !j.ScheduledFor.After(first.Add(-200*time.Millisecond)):
				caught = append(caught, *j.ScheduledFor)
			default:
				onTime = append(onTime, *j.ScheduledFor)
			}
		}
		// The slots due at the first fire and not on time: from the old
		// next_fire_at to the last one a tick before it.
		due := int(first.Add(-200*time.Millisecond).Sub(b.NextFireAt)/slot) + 1
		if due <= maxCatchup {
			t.Fatalf("%s: %d slots missed in the downtime, want more than %d", name, due, maxCatchup)
		}
		t.Logf("%s: %d slots due at the first fire after the restart, %d caught up, %d on time after, missed_total +%d",
			name, due, len(caught), len(onTime), s.MissedTotal-b.MissedTotal)
		if len(caught) != catchup {
			t.Errorf("%s: %d catch-up jobs %v, want %d", name, len(caught), caught, catchup)
		}
		lastDue := b.NextFireAt.Add(time.Duration(due-1) * slot)
		for i, at := range caught { // the newest, oldest first
			if want := lastDue.Add(-time.Duration(len(caught)-1-i) * slot); !at.Equal(want) {
				t.Errorf("%s: catch-up job %d for %s, want %s", name, i, at, want)
			}
		}
		// From the restart on, every slot up to the last fired is fired
		// once or counted missed: the first fire's misses, and any slot a
		// loaded machine's replicas all ticked too late for ("latest" and
		// "all" catch those up, "none" counts them).
		last := after[len(after)-1].ScheduledFor
		slots := int64(last.Sub(b.NextFireAt)/slot) + 1
		if got := s.MissedTotal - b.MissedTotal + int64(len(after)); got != slots {
			t.Errorf("%s: %d jobs and %d missed since the restart, want the %d slots from %s to %s",
				name, len(after), s.MissedTotal-b.MissedTotal, slots, b.NextFireAt, last)
		}
		if name != "none" && s.MissedTotal-b.MissedTotal != int64(due-catchup) {
			t.Errorf("%s: missed_total grew by %d, want %d (%d due, %d caught up)",
				name, s.MissedTotal-b.MissedTotal, due-catchup, due, catchup)
		}
		for i := 1; i < len(onTime); i++ {
			if !onTime[i].After(onTime[i-1]) {
				t.Errorf("%s: slot %s fired twice", name, onTime[i])
			}
		}
		if name != "none" && len(onTime) > 0 && !onTime[0].Equal(lastDue.Add(slot)) {
			t.Errorf("%s: first job after the catch-up for %s, want %s", name, onTime[0], lastDue.Add(slot))
		}
	}
}

// scheduleFile writes a --schedules file in t's temp dir.
func scheduleFile(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "schedules.json")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startScheduleReplicas(t *testing.T, storeURL, file string) [3]*proc {
	var replicas [3]*proc
	for i, name := range []string{"node-a", "node-b", "node-c"} {
		args := append([]string{"--addr", "127.0.0.1:0", "--store", storeURL, "--node-id", name, "--schedules", file}, fastArgs...)
		replicas[i] = startProcess(t, "", args...)
	}
	return replicas
}

// openTestStore opens the replicas' store in the test, to read it.
func openTestStore(t *testing.T, url string) store.Store {
	st, err := openStore(t.Context(), url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func getSchedule(t *testing.T, st store.Store, name string) *store.Schedule {
	t.Helper()
	s, err := st.ScheduleGet(t.Context(), &store.ScheduleGetParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// listScheduleJobs returns the jobs name fired, oldest slot first.
func listScheduleJobs(t *testing.T, st store.Store, name string) []*store.Job {
	t.Helper()
	jobs, err := st.JobList(t.Context(), &store.JobListParams{Schedule: name, Limit: store.MaxBatch, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(jobs, func(a, b *store.Job) int { return a.ScheduledFor.Compare(*b.ScheduledFor) })
	return jobs
}

func jobSlots(t *testing.T, st store.Store, name string) []time.Time {
	t.Helper()
	var slots []time.Time
	for _, j := range listScheduleJobs(t, st, name) {
		slots = append(slots, *j.ScheduledFor)
	}
	return slots
}

// waitJobs waits until name has fired n jobs, up to a minute.
func waitJobs(t *testing.T, st store.Store, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := len(listScheduleJobs(t, st, name))
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s fired %d jobs in a minute, want %d", name, got, n)
		}
		time.Sleep(100 * time.Millisecond) // polling outside processes: no signal to wait on
	}
}

// pauseSchedule pauses name through the API: a fire after it loses its
// compare-and-set, so what the store holds then is final.
func pauseSchedule(t *testing.T, url, name string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/schedules/"+name+"/pause", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("pause %s: %s", name, resp.Status)
	}
}
