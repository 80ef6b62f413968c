package api_test

import (
	"bytes"
	"net/http"
	"testing"
)

// A lease token is the holder's proof: whoever has it can ack, fail or
// release the job. Worker tokens are shared by many workers and read every
// job, so no answer but the lease that took the delivery may carry it; a
// worker that reads another's job must not be able to settle it.
func TestLeaseTokenOnlyInLeaseAnswer(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens)
	work, adm := bearer("work"), bearer("adm")
	j := e.do("POST", "/v1/jobs", `{"queue":"q","kind":"k","unique_key":"u"}`, work...).want(http.StatusCreated).job()
	var leased struct{ Jobs []job }
	e.do("POST", "/v1/lease", `{"worker_id":"w-a","queues":["q"]}`, work...).want(http.StatusOK).into(&leased)
	if len(leased.Jobs) != 1 || leased.Jobs[0].Lease == nil || leased.Jobs[0].Lease.Token == "" {
		t.Fatalf("lease answer %+v has no token", leased.Jobs)
	}
	token := []byte(leased.Jobs[0].Lease.Token)

	// Worker w-b, with the same bearer token, reads w-a's job every way it can.
	for _, r := range []struct {
		method, path, body string
		header             []string
		status             int
	}{
		{"GET", "/v1/jobs/" + j.ID, "", work, http.StatusOK},
		{"GET", "/v1/jobs?queue=q", "", work, http.StatusOK},
		{"GET", "/v1/jobs?state=running", "", work, http.StatusOK},
		{"POST", "/v1/jobs", `{"queue":"q","kind":"k","unique_key":"u"}`, work, http.StatusOK},
		{"POST", "/v1/jobs/batch", `{"jobs":[{"queue":"q","kind":"k","unique_key":"u"}]}`, work, http.StatusCreated},
		{"POST", "/v1/lease", `{"worker_id":"w-b","queues":["q"]}`, work, http.StatusOK},
		{"POST", "/v1/workers/w-b/heartbeat", `{"in_flight":["` + j.ID + `"]}`, work, http.StatusOK},
		{"GET", "/v1/workers", "", work, http.StatusOK},
		{"GET", "/v1/queues", "", work, http.StatusOK},
		{"POST", "/v1/jobs/" + j.ID + "/cancel", "", adm, http.StatusOK}, // still running, cancel requested
	} {
		res := e.do(r.method, r.path, r.body, r.header...).want(r.status)
		if bytes.Contains(res.Body, token) {
			t.Errorf("%s %s shows w-a's lease token: %s", r.method, r.path, res.Body)
		}
	}
	// Reads still show who holds the job, and until when.
	got := e.do("GET", "/v1/jobs/"+j.ID, nil, work...).want(http.StatusOK).job()
	if got.Lease == nil || got.Lease.WorkerID != "w-a" || got.Lease.ExpiresAt == "" || got.Lease.Token != "" {
		t.Errorf("lease as read: %+v", got.Lease)
	}

	// The holder settles with the token its lease answer gave; the answers
	// to settling carry no token either.
	for _, path := range []string{"/extend", "/ack"} {
		res := e.do("POST", "/v1/jobs/"+j.ID+path, map[string]any{"token": string(token)}, work...).want(http.StatusOK)
		if bytes.Contains(res.Body, token) {
			t.Errorf("%s answer shows the token: %s", path, res.Body)
		}
	}
}
