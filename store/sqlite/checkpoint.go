package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointEvery is the least time between two checkpoints: under a
// steady stream of commits the WAL is copied into the database four times
// a second, a few megabytes each time at most.
const checkpointEvery = 250 * time.Millisecond

// checkpointer copies the WAL into the database file from a connection of
// its own. The writer never checkpoints (wal_autocheckpoint 0): SQLite's
// automatic checkpoint runs inside the commit that crosses its mark, while
// the store's one writer waits, and copying 4,000 pages held it 50-70 ms,
// for whichever transaction drew it (a lease, a settle, a tick's chunk of
// maintenance). A passive checkpoint on another connection neither blocks
// the writer nor waits for it.
type checkpointer struct {
	db   *sql.DB
	poke chan struct{} // a commit happened since the last checkpoint
	stop chan struct{}
	done sync.WaitGroup
	// after, if set, is told each checkpoint's outcome: the WAL's frames
	// and how many of them are in the database now (tests).
	after func(frames, copied int, err error)
}

func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, poke: make(chan struct{}, 1), stop: make(chan struct{})}
	c.done.Go(c.run)
	return c
}

// committed tells the checkpointer the WAL has grown. It never blocks.
func (c *checkpointer) committed() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	for {
		select {
		case <-c.stop:
			return
		case <-c.poke:
		}
		// A failed checkpoint leaves the frames in the WAL; the next
		// commit's poke tries again.
		var busy, frames, copied int
		err := c.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
		if c.after != nil {
			c.after(frames, copied, err)
		}
		select {
		case <-c.stop:
			return
		case <-time.After(checkpointEvery):
		}
	}
}

// close stops the checkpointer and closes its connection, which, the last
// one open on the file, checkpoints what is left.
func (c *checkpointer) close() error {
	close(c.stop)
	c.done.Wait()
	return c.db.Close()
}
