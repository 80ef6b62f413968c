//go:build linux

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// SIGKILL of the runner leaves no process of its child's group running
// (the shell and the sleep it forked alike); the job is rescued within
// dead-after and a tick or two, and another runner finishes it.
func TestWorkRunnerKilled(t *testing.T) {
	t.Parallel()
	_, c := startServer(t, fastArgs...)
	dir := t.TempDir()
	j := enqueueJob(t, c, `{"queue":"crash","kind":"k","payload":{"n":1}}`)
	p := newProbe(t, dir, j.ID)
	script := `if [ "$TETHER_ATTEMPT" = 1 ]; then exec 9>"$PROBE_DIR/$TETHER_JOB_ID"; echo "started $$" >&9; sleep 60; fi; cat`
	env := []string{"PROBE_DIR=" + dir}
	a := runner(t, c.BaseURL, env, "--queue", "crash", "--worker-id", "w-killed", "--", "sh", "-c", script)
	pgid := pgidOf(t, strings.TrimPrefix(p.line(t), "started "))

	a.signal(t, syscall.SIGKILL)
	a.exit(t, 10*time.Second)
	p.gone(t, 10*time.Second, "after SIGKILL of the runner")
	// The probe closes as the last process of the group lets go of its
	// files, a moment before the kernel makes it a zombie: a process seen
	// alive just then is on its way out, so look again for a while.
	for deadline := time.Now().Add(10 * time.Second); groupAlive(pgid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("a process of the child's group %d survived the runner", pgid)
			break
		}
	}

	b := runner(t, c.BaseURL, env, "--once", "--wait", "30s", "--queue", "crash", "--", "sh", "-c", script)
	if code := b.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("the second runner exited %d, want 0 (acked)", code)
	}
	got := getJob(t, c, j.ID)
	if got.State != "succeeded" || string(got.Result) != `{"n":1}` || len(got.Attempts) != 2 {
		t.Fatalf("job %s result %s attempts %+v; want succeeded after a rescue", got.State, got.Result, got.Attempts)
	}
	first := got.Attempts[0]
	if first.Outcome != "orphaned" || first.WorkerID != "w-killed" || first.LastHeartbeatAt == nil || first.FinishedAt == nil {
		t.Fatalf("first attempt %+v, want orphaned from w-killed", first)
	}
	// dead-after (2 s) and up to two ticks (200 ms each), with slack for
	// a loaded machine (a CI run's packages share two cores); measured on
	// the server's clock.
	if lat := first.FinishedAt.Sub(*first.LastHeartbeatAt); lat < 2*time.Second || lat > 10*time.Second {
		t.Errorf("rescued %v after the runner's last heartbeat, want 2s..2.4s (10s with slack for a loaded machine)", lat)
	} else {
		t.Logf("rescued %v after the runner's last heartbeat", lat)
	}
}

// SIGTERM stops leasing and forwards SIGTERM: a child that finishes on it
// is acked; one that ignores it is killed after --grace and its job
// released with the attempt refunded; the worker is deregistered and the
// runner exits 0.
func TestWorkGracefulStop(t *testing.T) {
	t.Parallel()
	_, c := startServer(t)
	dir := t.TempDir()
	fin := enqueueJob(t, c, `{"queue":"stop","kind":"finisher"}`)
	stub := enqueueJob(t, c, `{"queue":"stop","kind":"stubborn"}`)
	pf, ps := newProbe(t, dir, fin.ID), newProbe(t, dir, stub.ID)
	script := `exec 9>"$PROBE_DIR/$TETHER_JOB_ID"
case $TETHER_JOB_KIND in
finisher) trap 'echo finished; exit 0' TERM ;;
*) trap '' TERM ;;
esac
echo started >&9
sleep 60`
	r := runner(t, c.BaseURL, []string{"PROBE_DIR=" + dir}, "--queue", "stop", "--concurrency", "2", "--grace", "1s",
		"--worker-id", "w-graceful", "--", "sh", "-c", script)
	pf.line(t)
	ps.line(t)

	stopped := time.Now()
	r.signal(t, syscall.SIGTERM)
	if code := r.exit(t, 30*time.Second); code != 0 {
		t.Errorf("the runner exited %d after SIGTERM, want 0", code)
	}
	if took := time.Since(stopped); took < time.Second {
		t.Errorf("the runner exited %v after SIGTERM, before its 1s grace: the stubborn child was not waited for", took)
	}
	pf.gone(t, 15*time.Second, "the finisher")
	ps.gone(t, 15*time.Second, "the child that ignores SIGTERM")
	if j := getJob(t, c, fin.ID); j.State != "succeeded" || string(j.Result) != `"finished"` {
		t.Errorf("the finisher's job: %s %s, want succeeded \"finished\"", j.State, j.Result)
	}
	j := getJob(t, c, stub.ID)
	if j.State != "available" || j.Attempt != 0 || j.Attempts[0].Outcome != "released" {
		t.Errorf("the stubborn child's job: %s attempt %d %+v; want available, attempt 0, released", j.State, j.Attempt, j.Attempts)
	}
	if ws := registeredWorkers(t, c); slices.Contains(ws, "w-graceful") {
		t.Errorf("the worker is still registered: %v", ws)
	}
}

// A cancel during a run reaches the child as SIGTERM; its job ends
// cancelled with the signal in last_error.
func TestWorkCancel(t *testing.T) {
	t.Parallel()
	_, c := startServer(t, fastArgs...) // a heartbeat every 666 ms brings the cancel
	dir := t.TempDir()
	j := enqueueJob(t, c, `{"queue":"cancel","kind":"k"}`)
	p := newProbe(t, dir, j.ID)
	r := runner(t, c.BaseURL, []string{"PROBE_DIR=" + dir}, "--once", "--queue", "cancel", "--grace", "20s", "--",
		"sh", "-c", `exec 9>"$PROBE_DIR/$TETHER_JOB_ID"; echo started >&9; exec sleep 60`)
	p.line(t)
	adminPost(t, c, "/v1/jobs/"+j.ID+"/cancel")
	p.gone(t, 15*time.Second, "after the cancel")
	if code := r.exit(t, 30*time.Second); code != 1 {
		t.Errorf("--once exited %d for a cancelled job, want 1", code)
	}
	got := getJob(t, c, j.ID)
	if got.State != "cancelled" || got.Attempts[0].Outcome != "cancelled" || deref(got.LastError) != "killed by signal 15 (terminated)" {
		t.Errorf("job %s, attempt %s, last_error %q; want cancelled by SIGTERM", got.State, got.Attempts[0].Outcome, deref(got.LastError))
	}
}

// A runner frozen by SIGSTOP past dead-after loses its job to a rescue;
// once it runs again it kills its child and never settles the job, which
// its new holder then settles.
func TestWorkLostWhileStopped(t *testing.T) {
	t.Parallel()
	_, c := startServer(t, fastArgs...)
	dir := t.TempDir()
	j := enqueueJob(t, c, `{"queue":"frozen","kind":"k"}`)
	p := newProbe(t, dir, j.ID)
	r := runner(t, c.BaseURL, []string{"PROBE_DIR=" + dir}, "--once", "--queue", "frozen", "--grace", "2s",
		"--worker-id", "w-frozen", "--", "sh", "-c", `exec 9>"$PROBE_DIR/$TETHER_JOB_ID"; echo started >&9; sleep 60`)
	p.line(t)

	r.signal(t, syscall.SIGSTOP)
	var taken []*client.Job
	for deadline := time.Now().Add(30 * time.Second); len(taken) == 0 && time.Now().Before(deadline); {
		jobs, err := c.Lease(t.Context(), client.LeaseRequest{WorkerID: "w-thief", Queues: []string{"frozen"}, WaitMS: 10000})
		if err != nil {
			t.Fatal(err)
		}
		taken = jobs
	}
	if len(taken) != 1 {
		t.Fatal("the frozen runner's job was not rescued within 30s")
	}
	r.signal(t, syscall.SIGCONT)
	p.gone(t, 20*time.Second, "after the lease was lost")
	if code := r.exit(t, 30*time.Second); code != 1 {
		t.Errorf("--once exited %d after losing its job, want 1", code)
	}
	out := r.output()
	if !strings.Contains(out, `msg="job lost: its lease was taken, not settling it"`) ||
		strings.Contains(out, "before the settle") || strings.Contains(out, `msg="job acked"`) ||
		strings.Contains(out, `msg="job failed"`) || strings.Contains(out, `msg="job released"`) {
		t.Errorf("the runner did not give the job up without a settle:\n%s", out)
	}
	got := getJob(t, c, j.ID)
	if got.State != "running" || got.Lease == nil || got.Lease.WorkerID != "w-thief" || got.Attempts[0].Outcome != "orphaned" {
		t.Fatalf("job %s held by %+v, attempts %+v; want running under w-thief after an orphaned attempt", got.State, got.Lease, got.Attempts)
	}
	if _, err := c.Ack(t.Context(), j.ID, taken[0].Lease.Token, nil); err != nil {
		t.Errorf("the new holder's ack: %v", err)
	}
}

// A job running three times its timeout_ms is kept alive by extends: one
// attempt, acked, though the reaper runs every 200 ms.
func TestWorkLongJobExtended(t *testing.T) {
	t.Parallel()
	_, c := startServer(t, "--tick", "200ms")
	j := enqueueJob(t, c, `{"queue":"long","kind":"k","payload":{"n":1},"timeout_ms":2000,"max_attempts":1}`)
	r := runner(t, c.BaseURL, nil, "--once", "--queue", "long", "--", "sh", "-c", "sleep 6; cat")
	if code := r.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	got := getJob(t, c, j.ID)
	if got.State != "succeeded" || len(got.Attempts) != 1 || string(got.Result) != `{"n":1}` {
		t.Errorf("job %s with attempts %+v; want succeeded in one attempt", got.State, got.Attempts)
	}
}

func registeredWorkers(t *testing.T, c *client.Client) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.WithoutCancel(t.Context()), "GET", c.BaseURL+"/v1/workers", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ws struct {
		Workers []struct {
			ID string `json:"id"`
		} `json:"workers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ws); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range ws.Workers {
		ids = append(ids, w.ID)
	}
	return ids
}
