package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tetherq/tether/scheduler"
)

// A second replica starts on the same store and shuts down as SIGTERM
// makes cmd/server do (its scheduler's context ends, and it records its
// stop): /nodes shows it live, then gone, without a reload.
func testNodesLive(t *testing.T, ctx context.Context, srv *server) {
	sched, err := scheduler.New(scheduler.Config{Store: srv.store, NodeID: "node-b", Version: "v0.0.1-b", Tick: bTick, DeadAfter: bDeadAfter})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = sched.Run(sctx); close(done) }()
	defer func() { stop(); <-done }()

	openLive(t, ctx, srv.url+"/nodes")
	row := `#nodes tr[data-node-id="node-b"]`
	pollPage(t, ctx, "node-b live on /nodes", `(row) => window.__mark === "no reload"
		&& (document.querySelector(row + " .badge") || {}).textContent === "live"`, row)
	stop()
	<-done
	pollPage(t, ctx, "node-b gone on /nodes", `(row) => window.__mark === "no reload"
		&& (document.querySelector(row + " .badge") || {}).textContent === "gone"`, row)
	text := eval[string](t, ctx, `document.querySelector('`+row+`').innerText`)
	for _, want := range []string{"v0.0.1-b", "stopped"} {
		if !strings.Contains(text, want) {
			t.Errorf("node-b's row %q lacks %q", text, want)
		}
	}
	// This server stays live, and lists first.
	if first := eval[string](t, ctx, `document.querySelector("#nodes tbody tr").dataset.nodeId`); first != "node-a" {
		t.Errorf("the first row is %s, want node-a (live)", first)
	}
}
