package sqlite_test

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The writer never checkpoints (a checkpoint inside a commit held the one
// writer 50-70 ms); the checkpointer's own connection copies the WAL into
// the database after commits, every frame of it when nothing else reads.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	t.Parallel()
	s := open(t)
	type outcome struct {
		frames, copied int
		err            error
	}
	done := make(chan outcome, 16)
	s.SetCheckpointHookForTest(func(frames, copied int, err error) {
		select {
		case done <- outcome{frames, copied, err}:
		default:
		}
	})
	if v, err := s.WriterPragmaForTest(t.Context(), "wal_autocheckpoint"); err != nil || v != "0" {
		t.Errorf("the writer's wal_autocheckpoint = %q, %v; want 0", v, err)
	}
	enqueued(t, s, 500, store.JobSpec{}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	select {
	case o := <-done:
		if o.err != nil || o.frames == 0 || o.copied != o.frames {
			t.Errorf("checkpoint after a commit: %d of %d frames copied, %v; want all of them", o.copied, o.frames, o.err)
		}
	case <-time.After(10 * time.Second): // a generous bound: it runs right after the commit
		t.Fatal("no checkpoint within 10 s of a commit")
	}
}
