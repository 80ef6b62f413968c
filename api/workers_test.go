package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// workerID holds ":" and "/", as a host:port/name id does.
const workerID = "10.0.0.5:8080/w-3"

func TestRegisterWorker(t *testing.T) {
	t.Parallel()
	e := setup(t)
	got := e.do("POST", "/v1/workers", map[string]any{"id": workerID, "queues": []string{"q"}, "labels": map[string]string{"host": "a"}}).
		want(http.StatusCreated).object()
	if got["id"] != workerID || got["heartbeat_interval_ms"] != 5000.0 || got["dead_after_ms"] != 15000.0 {
		t.Errorf("register: %v", got)
	}
	gen := e.do("POST", "/v1/workers", nil).want(http.StatusCreated).object()
	if id, _ := gen["id"].(string); !strings.HasPrefix(id, "w-") || len(id) < 10 {
		t.Errorf("generated id %v", gen["id"])
	}
	for body, field := range map[string]string{
		`{"id":""}`: "id",
		`{"id":"` + strings.Repeat("x", 201) + `"}`: "id",
		`{"id":"a\nb"}`:      "id",
		`{"queues":["a b"]}`: "queues[0]",
		`{"labels":{"k":1}}`: "labels",
		`{"labels":[]}`:      "labels",
		`{"name":"x"}`:       "name",
	} {
		e.do("POST", "/v1/workers", body).field(field)
	}
}

func TestHeartbeatEncodedID(t *testing.T) {
	t.Parallel()
	e := setup(t)
	path := "/v1/workers/" + url.PathEscape(workerID)
	if !strings.Contains(path, "%2F") {
		t.Fatalf("path %s does not encode the slash", path)
	}
	// An unknown worker is registered by its first heartbeat, with no body.
	got := e.do("POST", path+"/heartbeat", nil).want(http.StatusOK).object()
	if len(got["cancel"].([]any)) != 0 || len(got["lost"].([]any)) != 0 {
		t.Errorf("heartbeat: %v", got)
	}
	var list struct {
		Workers []struct {
			ID    string
			State string
		}
	}
	e.do("GET", "/v1/workers", nil).want(http.StatusOK).into(&list)
	if len(list.Workers) != 1 || list.Workers[0].ID != workerID {
		t.Fatalf("workers %+v", list.Workers)
	}

	j := e.enqueue("q", "k")
	e.lease(workerID, "q")
	e.do("POST", "/v1/jobs/"+j.ID+"/cancel", nil).want(http.StatusOK)
	got = e.do("POST", path+"/heartbeat", map[string]any{"in_flight": []string{j.ID, "gone"}}).want(http.StatusOK).object()
	if cancel := got["cancel"].([]any); len(cancel) != 1 || cancel[0] != j.ID {
		t.Errorf("cancel %v", got["cancel"])
	}
	if lost := got["lost"].([]any); len(lost) != 1 || lost[0] != "gone" {
		t.Errorf("lost %v", got["lost"])
	}
	e.do("POST", path+"/heartbeat", `{}`).want(http.StatusOK)
	e.do("POST", path+"/heartbeat", `{"in_flight":"x"}`).field("in_flight")
	e.do("POST", "/v1/workers/a%07b/heartbeat", nil).field("id")

	e.do("DELETE", path, nil).want(http.StatusNoContent)
	if got := e.do("GET", "/v1/jobs/"+j.ID, nil).want(http.StatusOK).job(); got.State != "cancelled" && got.State != "available" {
		t.Errorf("job of a deregistered worker: %s", got.State)
	}
	p := e.do("DELETE", path, nil).problem(http.StatusNotFound, "not_found")
	if p["worker_id"] != workerID {
		t.Errorf("worker_id %v", p["worker_id"])
	}
}

func TestWorkerStates(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, id := range []string{"dead", "suspect", "live"} {
		e.do("POST", "/v1/workers", map[string]any{"id": id}).want(http.StatusCreated)
		e.clock.Advance(6 * time.Second)
	}
	// Now: dead was heard from 18 s ago, suspect 12 s, live 6 s.
	var list struct {
		Workers []struct {
			ID, State       string
			LastHeartbeatAt string `json:"last_heartbeat_at"`
			Queues          []string
			Labels          map[string]string
			InFlight        []string `json:"in_flight"`
		}
	}
	e.do("GET", "/v1/workers", nil).want(http.StatusOK).into(&list)
	if len(list.Workers) != 3 {
		t.Fatalf("workers %+v", list.Workers)
	}
	for _, w := range list.Workers {
		if w.State != w.ID || w.Queues == nil || w.Labels == nil || w.InFlight == nil {
			t.Errorf("worker %+v", w)
		}
	}
	var stats struct {
		Jobs         map[string]int
		Workers      map[string]int
		RescuesTotal *int `json:"rescues_total"`
	}
	e.enqueue("q", "k")
	e.do("GET", "/v1/stats", nil).want(http.StatusOK).into(&stats)
	if stats.Workers["live"] != 1 || stats.Workers["suspect"] != 1 || stats.Workers["dead"] != 1 ||
		len(stats.Jobs) != 6 || stats.Jobs["available"] != 1 || stats.RescuesTotal == nil {
		t.Errorf("stats %+v", stats)
	}
}

func TestNodes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	err := e.store.NodeHeartbeat(t.Context(), &store.NodeHeartbeatParams{ID: "node-1", Version: "v1", StartedAt: t0, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Nodes []map[string]any
	}
	e.do("GET", "/v1/nodes", nil).want(http.StatusOK).into(&out)
	if len(out.Nodes) != 1 || out.Nodes[0]["id"] != "node-1" || out.Nodes[0]["version"] != "v1" ||
		out.Nodes[0]["started_at"] != ms(t0) || out.Nodes[0]["state"] != "live" || out.Nodes[0]["stopped_at"] != nil {
		t.Errorf("nodes %+v", out.Nodes)
	}
	// Silent for dead_after (15 s by default): gone.
	e.clock.Advance(store.DefaultDeadAfter)
	e.do("GET", "/v1/nodes", nil).want(http.StatusOK).into(&out)
	if out.Nodes[0]["state"] != "gone" {
		t.Errorf("a node silent for dead_after reads %v, want gone", out.Nodes[0]["state"])
	}
	// A heartbeat makes it live again; a stop makes it gone at once.
	now := e.clock.Now()
	if err := e.store.NodeHeartbeat(t.Context(), &store.NodeHeartbeatParams{ID: "node-1", Version: "v1", StartedAt: t0, Now: now}); err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/v1/nodes", nil).want(http.StatusOK).into(&out)
	if out.Nodes[0]["state"] != "live" {
		t.Errorf("after a heartbeat the node reads %v, want live", out.Nodes[0]["state"])
	}
	if err := e.store.NodeStop(t.Context(), &store.NodeStopParams{ID: "node-1", Now: now}); err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/v1/nodes", nil).want(http.StatusOK).into(&out)
	if out.Nodes[0]["state"] != "gone" || out.Nodes[0]["stopped_at"] != ms(now) {
		t.Errorf("a stopped node reads %v, stopped_at %v; want gone at %s", out.Nodes[0]["state"], out.Nodes[0]["stopped_at"], ms(now))
	}
}

func TestQueues(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.enqueue("q", "k")
	e.enqueue("q", "k")
	e.do("POST", "/v1/jobs", `{"kind":"k","queue":"q","delay_ms":1000}`).want(http.StatusCreated)
	e.clock.Advance(3 * time.Second)
	e.promote()
	got := e.do("POST", "/v1/queues/q/pause", nil).want(http.StatusOK).object()
	if got["name"] != "q" || got["paused"] != true {
		t.Errorf("pause: %v", got)
	}
	var out struct{ Jobs []job }
	e.do("POST", "/v1/lease", `{"worker_id":"w","queues":["q"]}`).want(http.StatusOK).into(&out)
	if len(out.Jobs) != 0 {
		t.Errorf("leased %d jobs from a paused queue", len(out.Jobs))
	}
	var list struct{ Queues []map[string]any }
	e.do("GET", "/v1/queues", nil).want(http.StatusOK).into(&list)
	if len(list.Queues) != 1 {
		t.Fatalf("queues %v", list.Queues)
	}
	q := list.Queues[0]
	if q["available"] != 3.0 || q["scheduled"] != 0.0 || q["paused"] != true || q["oldest_available_age_ms"] != 3000.0 {
		t.Errorf("queue %v", q)
	}
	got = e.do("POST", "/v1/queues/q/resume", nil).want(http.StatusOK).object()
	if got["paused"] != false {
		t.Errorf("resume: %v", got)
	}
	e.do("POST", "/v1/queues/bad%20name/pause", nil).field("name")
}

// TestWorkerIDEscapes: ids whose escaped form is or is not Go's default
// path encoding both route (chi then routes on RawPath or on Path).
func TestWorkerIDEscapes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, id := range []string{"50%:x y", "a@b.c", "ü/ñ", workerID} {
		path := "/v1/workers/" + url.PathEscape(id)
		e.do("POST", path+"/heartbeat", nil).want(http.StatusOK)
		e.do("DELETE", path, nil).want(http.StatusNoContent)
		if p := e.do("DELETE", path, nil).problem(http.StatusNotFound, "not_found"); p["worker_id"] != id {
			t.Errorf("%s: worker_id %v", path, p["worker_id"])
		}
	}
}
