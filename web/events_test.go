package web_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
	"github.com/tetherq/tether/web"
)

// countingStore counts the poller's reads of the queue aggregates.
type countingStore struct {
	*sqlite.Store
	queueLists atomic.Int64
}

func (c *countingStore) QueueList(ctx context.Context, p *store.QueueListParams) ([]*store.Queue, error) {
	c.queueLists.Add(1)
	return c.Store.QueueList(ctx, p)
}

// stream is one open /events response, read line by line.
type stream struct {
	lines chan string
}

func openStream(t *testing.T, url string) *stream {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &stream{lines: make(chan string, 100)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { res.Body.Close() })
	return s
}

// await reads lines until one satisfies ok; it fails after 5 s or at the
// stream's end.
func (s *stream) await(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case line, open := <-s.lines:
			if !open {
				t.Fatalf("stream ended before %s", what)
			}
			if ok(line) {
				return
			}
		case <-timeout:
			t.Fatalf("no %s within 5 s", what)
		}
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs := &countingStore{Store: st}
	shutdown := make(chan struct{})
	h, err := web.New(web.Config{Store: cs, Insights: st, PollInterval: 20 * time.Millisecond,
		PingInterval: 50 * time.Millisecond, Shutdown: shutdown})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	a, b := openStream(t, srv.URL), openStream(t, srv.URL)
	a.await(t, "a ping", func(l string) bool { return l == ": ping" })
	// Whatever the number of streams, one poller reads the store.
	before := cs.queueLists.Load()
	time.Sleep(200 * time.Millisecond)
	if reads := cs.queueLists.Load() - before; reads > 14 {
		t.Errorf("%d queue reads in 200 ms at a 20 ms interval with two streams: more than one poller", reads)
	}

	if _, err := st.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: []store.JobSpec{{Kind: "k", Queue: "q"}}, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*stream{a, b} {
		s.await(t, "a change of jobs and queues", func(l string) bool { return l == "data: jobs queues" })
	}
	if _, err := st.WorkerRegister(t.Context(), &store.WorkerRegisterParams{ID: "w", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	a.await(t, "a change of workers", func(l string) bool { return l == "data: workers" })
	// A replica that starts, then one that stops: the nodes page follows.
	if err := st.NodeHeartbeat(t.Context(), &store.NodeHeartbeatParams{ID: "node-b", StartedAt: time.Now(), Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	a.await(t, "a change of nodes as one starts", func(l string) bool { return l == "data: nodes" })
	if err := st.NodeStop(t.Context(), &store.NodeStopParams{ID: "node-b", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	a.await(t, "a change of nodes as one stops", func(l string) bool { return l == "data: nodes" })
	// A schedule written, then paused, as another replica would: the
	// schedules pages follow.
	spec := store.ScheduleSpec{Name: "nightly", Cron: "0 3 * * *", Job: store.ScheduleJob{Kind: "k"}}
	spec.Normalize()
	if _, err := st.ScheduleUpsert(t.Context(), &store.ScheduleUpsertParams{Spec: spec, Source: store.SourceAPI, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	a.await(t, "a change of schedules as one is written", func(l string) bool { return l == "data: schedules" })
	if _, err := st.ScheduleSetPaused(t.Context(), &store.ScheduleSetPausedParams{Name: "nightly", Paused: true, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	a.await(t, "a change of schedules as one is paused", func(l string) bool { return l == "data: schedules" })

	close(shutdown)
	for _, s := range []*stream{a, b} {
		s.ends(t)
	}
}

// ends waits up to 5 s for the server to end the stream.
func (s *stream) ends(t *testing.T) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, open := <-s.lines:
			if !open {
				return
			}
		case <-timeout:
			t.Fatal("the stream did not end within 5 s of shutdown")
		}
	}
}
