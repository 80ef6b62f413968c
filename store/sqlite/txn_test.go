package sqlite_test

import (
	"testing"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// The writer's statement cache keeps the statements in use prepared
// however many one-off texts pass through it: once the cache is full of
// one-off statements, an enqueue's statements, new to it, are prepared
// once and then stay, while each round prepares its one-off statement.
func TestStatementCacheKeepsStatementsInUse(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	if err := s.OneOffStatementsForTest(ctx, 0, 300); err != nil { // past the cache's 256
		t.Fatal(err)
	}
	before := s.PreparedForTest()
	for i := 300; i < 400; i++ {
		if err := s.OneOffStatementsForTest(ctx, i, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k"}}, Now: storetest.Base}); err != nil {
			t.Fatal(err)
		}
	}
	// 100 one-off statements, and an enqueue's few once each.
	if n := s.PreparedForTest() - before; n > 110 {
		t.Errorf("100 rounds of a one-off statement and an enqueue prepared %d statements, want about 100", n)
	}
}
