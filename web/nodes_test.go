package web_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// nodeRows returns each row of /nodes as "id state rescues", in page order.
func nodeRows(t *testing.T, body string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<tr data-node-id="([^"]+)".*?badge-(\w+).*?data-label="Rescues">\s*([^<\s][^<]*?)\s*</td>`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1]+" "+m[2]+" "+m[3])
	}
	return out
}

// /nodes lists every replica: the live first (this server live whatever
// its row says), then the gone, stopped or silent, each with the rescues
// it made.
func TestNodesPage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	beat := func(id string) {
		t.Helper()
		if err := e.store.NodeHeartbeat(ctx, &store.NodeHeartbeatParams{ID: id, Version: "v1.2." + id[len(id)-1:],
			StartedAt: e.clock.Now(), Now: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	beat("node-1") // this server, silent since: it never thinks itself gone
	beat("node-4") // falls silent
	e.scene()      // node-1 rescues one job, a minute on
	beat("node-2")
	beat("node-3")
	if err := e.store.NodeStop(ctx, &store.NodeStopParams{ID: "node-3", Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	// node-2 rescues the jobs of the scene's silent worker, and two of a
	// worker that falls silent now.
	e.enqueue(store.JobSpec{Kind: "k", Queue: "video"}, store.JobSpec{Kind: "k", Queue: "video"})
	e.lease("w-video", "video", 2)
	e.clock.Advance(time.Minute)
	orphans, err := e.store.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: e.clock.Now().Add(-15 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	beat("node-2")
	rescued, err := e.store.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "node-2", Now: e.clock.Now()})
	if err != nil || len(rescued) != 4 {
		t.Fatalf("node-2 rescued %d jobs (%v), want the scene's two and w-video's two", len(rescued), err)
	}

	status, body := e.get("/nodes")
	if status != 200 {
		t.Fatalf("GET /nodes = %d", status)
	}
	want := []string{"node-2 live 4", "node-1 live 1", "node-3 gone 0", "node-4 gone 0"}
	if got := nodeRows(t, body); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("rows %q, want %q", got, want)
	}
	for _, w := range []string{"2 live", "2 gone", "v1.2.2", "(this server)", "· stopped", `href="/nodes" aria-current="page"`} {
		if !strings.Contains(body, w) {
			t.Errorf("/nodes lacks %q", w)
		}
	}
	if n := strings.Count(body, "· stopped"); n != 1 {
		t.Errorf("%d nodes read stopped, want node-3 alone", n)
	}
	// The panel alone, as the page's script fetches it on a change of nodes.
	status, body = e.get("/nodes?fragment=nodes")
	if status != 200 || !strings.Contains(body, `data-topics="nodes"`) || len(nodeRows(t, body)) != 4 {
		t.Errorf("fragment nodes = %d:\n%s", status, body)
	}
}

// Without Insights the nodes are listed and the rescues say they are not
// counted, rather than reading 0.
func TestNodesWithoutInsights(t *testing.T) {
	t.Parallel()
	e := setup(t, withoutInsights)
	if err := e.store.NodeHeartbeat(t.Context(), &store.NodeHeartbeatParams{ID: "node-2", StartedAt: e.clock.Now(), Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	status, body := e.get("/nodes")
	if status != 200 || !strings.Contains(body, `data-node-id="node-2"`) || !strings.Contains(body, "not counted on this backend") {
		t.Errorf("GET /nodes without Insights = %d:\n%s", status, body)
	}
}
