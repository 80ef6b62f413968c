package postgres

import (
	"runtime"
	"sync"
	"testing"
)

// A batch that panics still wakes the calls merged into it and hands the
// slot on: nobody waits forever behind it.
func TestMergerSurvivesPanickingRun(t *testing.T) {
	var m merger[*int]
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() {
			if recover() == nil {
				t.Error("the first run's panic did not reach its caller")
			}
		}()
		first := 1
		m.do(&first, func([]*int) {
			close(started)
			<-release
			panic("boom")
		})
	})
	<-started
	ran := make(chan []*int, 2)
	calls := []int{2, 3}
	for i := range calls {
		wg.Go(func() { m.do(&calls[i], func(b []*int) { ran <- b }) })
	}
	for m.queued() < 2 { // both queue behind the held first run
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	close(ran)
	var batches [][]*int
	for b := range ran {
		batches = append(batches, b)
	}
	if len(batches) != 1 || len(batches[0]) != 2 {
		t.Fatalf("after the panic the waiting calls ran as %d batches, want one of 2", len(batches))
	}
	if m.busy || m.queued() != 0 {
		t.Errorf("merger left busy=%v with %d waiting", m.busy, m.queued())
	}
}
