package web_test

import (
	"strings"
	"testing"
)

// The dashboard shows who holds a running job and until when, never the
// lease token: with it, anyone who can read the page could settle the job.
func TestNoLeaseTokenOnPages(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	held := map[string]string{} // token → the worker holding it
	for _, j := range []struct{ id, worker string }{{s.held.ID, "w-quiet"}, {s.running.ID, "w-1"}} {
		lease := e.job(j.id).Lease
		if lease == nil || lease.Token == "" {
			t.Fatalf("job %s is not leased", j.id)
		}
		held[lease.Token] = j.worker
		if _, body := e.get("/jobs/" + j.id); !strings.Contains(body, ">"+j.worker+"</a>") {
			t.Errorf("job page of %s does not name its holder %s", j.id, j.worker)
		}
	}
	for _, path := range []string{"/", "/queues", "/workers", "/orphans", "/retries", "/dead", "/jobs",
		"/jobs?state=running", "/jobs/" + s.held.ID, "/jobs/" + s.held.ID + "?fragment=job", "/jobs/" + s.running.ID} {
		status, body := e.get(path)
		if status != 200 {
			t.Errorf("GET %s = %d", path, status)
		}
		for token, worker := range held {
			if strings.Contains(body, token) {
				t.Errorf("GET %s shows %s's lease token", path, worker)
			}
		}
	}
}
