package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherq/tether/client"
)

// fastArgs make a silent worker dead after 2 s, noticed within a tick.
var fastArgs = []string{"--dead-after", "2s", "--tick", "200ms"}

func TestSilentWorkerJobsRecovered(t *testing.T) {
	t.Parallel()
	srv := startServer(t, filepath.Join(t.TempDir(), "t.db"), fastArgs...)
	ctx := t.Context()
	c := newClient(srv.url)
	ids := enqueue(t, c, "silent", 20)

	leasedAt := time.Now() // before the lease: the server's record of it is no earlier
	held, err := c.Lease(ctx, client.LeaseRequest{WorkerID: "w-silent", Queues: []string{"silent"}, Max: 20})
	if err != nil || len(held) != 20 {
		t.Fatalf("lease = %d jobs, %v; want 20", len(held), err)
	}

	got := leaseAll(ctx, t, c, "w-rescuer", "silent", 20, leasedAt.Add(15*time.Second))
	elapsed := time.Since(leasedAt)
	if len(got) != 20 {
		t.Fatalf("the rescuer got %d jobs back, want 20", len(got))
	}
	// dead_after (2 s) + two ticks, with slack for a loaded machine.
	if elapsed < 2*time.Second || elapsed > 6*time.Second {
		t.Errorf("jobs came back %v after the last heartbeat, want between 2s and 6s", elapsed)
	}
	for _, j := range got {
		if j.Attempt != 2 || j.Rescues != 1 || !slices.Contains(ids, j.ID) {
			t.Errorf("job %s: attempt %d rescues %d, want 2 and 1", j.ID, j.Attempt, j.Rescues)
		}
		full, err := c.GetJob(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		a := full.Attempts[0]
		if a.Outcome != "orphaned" || a.WorkerID != "w-silent" || a.RecoveredBy == nil ||
			*a.RecoveredBy != "test-node" || a.LastHeartbeatAt == nil {
			t.Errorf("job %s first attempt = %+v, want orphaned from w-silent by test-node", j.ID, a)
		}
	}

	for _, j := range held {
		if _, err := c.Ack(ctx, j.ID, j.Lease.Token, nil); !errors.Is(err, client.ErrLeaseLost) {
			t.Errorf("ack under the silent worker's token: %v, want 409 lease_lost", err)
		}
	}
	hb, err := c.Heartbeat(ctx, "w-silent", nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(hb.Lost)
	slices.Sort(ids)
	if !slices.Equal(hb.Lost, ids) {
		t.Errorf("heartbeat lost = %v, want the 20 jobs", hb.Lost)
	}
}

func TestKilledWorkerJobsSettledOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, filepath.Join(t.TempDir(), "t.db"), fastArgs...)
	ctx := t.Context()
	c := newClient(srv.url)
	ids := enqueue(t, c, "killed", 100)

	tokens := runVictim(t, srv.url, "killed", 100)
	got := leaseAll(ctx, t, c, "w-survivor", "killed", 100, time.Now().Add(20*time.Second))
	if len(got) != 100 {
		t.Fatalf("got %d jobs back, want 100", len(got))
	}
	acks := make([]client.Ack, len(got))
	for i, j := range got {
		acks[i] = client.Ack{ID: j.ID, Token: j.Lease.Token}
	}
	res, err := c.Settle(ctx, acks, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.OK {
			t.Errorf("settle %s: %s", r.ID, r.Code)
		}
	}

	stale := make([]client.Ack, 0, len(tokens))
	for id, tok := range tokens {
		stale = append(stale, client.Ack{ID: id, Token: tok})
	}
	res, err = c.Settle(ctx, stale, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.OK || r.Code != "lease_lost" {
			t.Errorf("settle %s under the killed worker's token: ok %v code %q, want lease_lost", r.ID, r.OK, r.Code)
		}
	}
	for _, id := range ids {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var outcomes []string
		for _, a := range j.Attempts {
			outcomes = append(outcomes, a.Outcome)
		}
		if j.State != "succeeded" || strings.Join(outcomes, ",") != "orphaned,succeeded" {
			t.Errorf("job %s: %s with attempts %v, want succeeded after orphaned", id, j.State, outcomes)
		}
	}
	more, err := c.Lease(ctx, client.LeaseRequest{WorkerID: "w-survivor", Queues: []string{"killed"}, Max: 100})
	if err != nil || len(more) != 0 {
		t.Errorf("a further lease = %d jobs, %v; want none", len(more), err)
	}
}

// runVictim starts a worker process that leases n jobs of queue and
// heartbeats on, kills it with SIGKILL once it holds them all, and returns
// the tokens it held by job id.
func runVictim(t *testing.T, url, queue string, n int) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnvURL+"="+url, workerEnvQueue+"="+queue, workerEnvN+"="+strconv.Itoa(n))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "holding" {
		if id, tok, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "job "), " "); ok {
			tokens[id] = tok
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if len(tokens) != n {
		t.Fatalf("the worker process held %d jobs, want %d", len(tokens), n)
	}
	return tokens
}
