package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/store"
)

func withPageBytes(n int) option { return func(c *api.Config) { c.PageBytes = n } }

// enqueueWeighty enqueues n jobs of queue, each with a payload of size
// bytes, straight through the store, and returns their ids oldest first.
func (e *env) enqueueWeighty(queue string, n, size int) []string {
	e.t.Helper()
	var ids []string
	for i := range n {
		payload, _ := json.Marshal(fmt.Sprintf("%06d%s", i, strings.Repeat("p", size-8)))
		res, err := e.store.JobEnqueue(e.t.Context(), &store.JobEnqueueParams{
			Jobs: []store.JobSpec{{Kind: "k", Queue: queue, Payload: payload}}, Now: e.clock.Now()})
		if err != nil {
			e.t.Fatalf("enqueue: %v", err)
		}
		ids = append(ids, res.Jobs[0].ID)
	}
	return ids
}

// A page of GET /v1/jobs ends at its byte budget, not at its limit, and
// says so with next_cursor; following the cursors lists every job once.
func TestListStopsAtByteBudget(t *testing.T) {
	t.Parallel()
	const size = 1000
	e := setup(t, withPageBytes(2*size+5)) // each job weighs size+2: its payload and "{}"
	ids := e.enqueueWeighty("big", 5, size)
	var seen []string
	for cursor, pages := "", 0; ; pages++ {
		var page struct {
			Jobs       []job
			NextCursor *string `json:"next_cursor"`
		}
		path := "/v1/jobs?queue=big&limit=1000"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		e.do("GET", path, nil).want(http.StatusOK).into(&page)
		if want := min(3, len(ids)-len(seen)); len(page.Jobs) != want {
			t.Fatalf("page %d: %d jobs, want %d (two jobs' bytes and one more is the budget)", pages, len(page.Jobs), want)
		}
		for _, j := range page.Jobs {
			seen = append(seen, j.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if len(seen) != len(ids) || seen[0] != ids[len(ids)-1] || seen[len(seen)-1] != ids[0] {
		t.Errorf("the pages listed %q, want every job once, newest first: %q", seen, ids)
	}
}

// discard is a ResponseWriter that keeps nothing, so that measuring a
// request's allocations measures the server's.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// The review's attack: concurrent lists at the largest limit over jobs of
// 900 KiB payloads. Before the byte budget each list read and encoded every
// job (20 here: 18 MB per list, about 200 MB allocated by four); now each
// reads about its budget.
func TestListOfLargePayloadsAllocatesItsBudget(t *testing.T) {
	e := setup(t)
	e.enqueueWeighty("big", 20, 900<<10)
	list := func() {
		req := httptest.NewRequestWithContext(t.Context(), "GET", "/v1/jobs?limit=1000", nil)
		e.handler.ServeHTTP(&discard{h: http.Header{}}, req)
	}
	list() // warm up: the statement cache, the pool
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(list)
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("four lists allocated %.1f MiB", float64(allocated)/(1<<20))
	// The budget is 2 MiB, so each page holds three of these jobs (2.6 MiB);
	// reading, viewing and encoding them copies each about five times: 57
	// MiB for the four (81 MiB under -race). Without the budget: 434 MiB.
	if limit := uint64(160 << 20); allocated > limit {
		t.Errorf("four lists allocated %d MiB, want under %d MiB", allocated>>20, limit>>20)
	}
}

func TestListCursorNotIssued(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.enqueue("q", "k").ID
	e.do("GET", "/v1/jobs?cursor="+id, nil).want(http.StatusOK)
	for _, c := range []string{"x", "1", strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id, id + "0"} {
		e.do("GET", "/v1/jobs?cursor="+c, nil).field("cursor")
	}
}

// A fail's error text is cut to 64 KiB, on the job and on its attempt, at
// a character boundary; a settle's fail the same.
func TestFailErrorCapped(t *testing.T) {
	t.Parallel()
	e := setup(t)
	long := strings.Repeat("é", 40<<10) // 80 KiB of two-byte characters
	for _, via := range []string{"fail", "settle"} {
		e.enqueue("q", "k")
		j := e.lease("w", "q")
		if via == "fail" {
			e.do("POST", "/v1/jobs/"+j.ID+"/fail", map[string]any{"token": j.Lease.Token, "error": long}).want(http.StatusOK)
		} else {
			e.do("POST", "/v1/settle", map[string]any{"fails": []any{
				map[string]any{"id": j.ID, "token": j.Lease.Token, "error": long}}}).want(http.StatusOK)
		}
		var got struct {
			LastError string `json:"last_error"`
			Attempts  []struct {
				Error string `json:"error"`
			} `json:"attempts"`
		}
		e.do("GET", "/v1/jobs/"+j.ID, nil).want(http.StatusOK).into(&got)
		for what, s := range map[string]string{"last_error": got.LastError, "attempt error": got.Attempts[0].Error} {
			if len(s) > store.MaxErrorBytes || !utf8.ValidString(s) || !strings.HasPrefix(long, strings.TrimSuffix(s, "… [cut at 64 KiB]")) {
				t.Errorf("%s: %s is %d bytes (valid UTF-8: %v), want a prefix of the error within %d bytes",
					via, what, len(s), utf8.ValidString(s), store.MaxErrorBytes)
			}
		}
	}
}

// Anyone who may enqueue can make queues; /metrics names the 100 largest
// and sums the rest under queue="(other)", so series stay bounded.
func TestMetricsQueueLabelsBounded(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var specs []store.JobSpec
	for i := range 150 {
		specs = append(specs, store.JobSpec{Kind: "k", Queue: fmt.Sprintf("q%03d", i)})
	}
	for range 3 {
		specs = append(specs, store.JobSpec{Kind: "k", Queue: "zz-busy"}) // the largest, last by name
	}
	if _, err := e.store.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	body := string(e.do("GET", "/metrics", nil).want(http.StatusOK).Body)
	queues := map[string]bool{}
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, `tether_queue_jobs{queue="`); ok {
			queues[rest[:strings.IndexByte(rest, '"')]] = true
		}
	}
	if len(queues) != 101 || !queues["zz-busy"] || !queues["(other)"] || !queues["q000"] || queues["q149"] {
		t.Errorf("%d queue labels (zz-busy %v, (other) %v, q000 %v, q149 %v); want the 100 largest, ties by name, and (other)",
			len(queues), queues["zz-busy"], queues["(other)"], queues["q000"], queues["q149"])
	}
	// 51 queues of one available job each are summed.
	contains(t, body, `tether_queue_jobs{queue="(other)",state="available"} 51`+"\n")
}
