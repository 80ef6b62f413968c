package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

// A bulk request changes at most its limit of jobs and says that more
// remain; counting stops at the limit too, and the confirmation says "more
// than".
func TestBulkBounds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	specs := make([]store.JobSpec, 7)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Queue: "q"}
	}
	if _, err := st.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	d := &dash{cfg: Config{NodeID: "n"}, store: st, ins: st, now: func() time.Time { return now }, log: slog.New(slog.DiscardHandler)}
	set, err := d.jobsMatching(ctx, jobSearch{Queue: "q"}, opCancel)
	if err != nil {
		t.Fatal(err)
	}
	lim := bulkLimits{jobs: 3, lists: 10}
	if n, exact, err := d.countBulk(ctx, set, lim); n != 7 || !exact || err != nil {
		t.Errorf("count from the counts = %d exact %v (%v), want 7 exact", n, exact, err)
	}
	listed := set
	listed.counted = -1 // as with a kind filter
	if n, exact, err := d.countBulk(ctx, listed, lim); n != 4 || exact || err != nil {
		t.Errorf("count by listing, limit 3 = %d exact %v (%v), want more than 3", n, exact, err)
	}
	// One list call looks at the scheduled jobs only: none found, not exact.
	if n, exact, err := d.countBulk(ctx, listed, bulkLimits{jobs: 3, lists: 1}); n != 0 || exact || err != nil {
		t.Errorf("count in one list call = %d exact %v (%v), want 0, not exact", n, exact, err)
	}
	for _, want := range []struct {
		acted int
		more  bool
	}{{3, true}, {3, true}, {1, false}, {0, false}} {
		acted, failed, more, err := d.actBulk(ctx, opCancel, set, lim)
		if acted != want.acted || failed != 0 || more != want.more || err != nil {
			t.Errorf("act = %d acted, %d failed, more %v (%v), want %d, more %v", acted, failed, more, err, want.acted, want.more)
		}
	}

	// Through the handler: the confirmation says more than the limit, the
	// flash that more remain.
	listed, _ = d.jobsMatching(ctx, jobSearch{Queue: "q", State: "cancelled"}, opDelete)
	listed.counted = -1
	post := func(form url.Values) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/jobs/bulk", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		_ = req.ParseForm()
		rec := httptest.NewRecorder()
		d.bulk(rec, req, opDelete, listed, "/jobs/bulk", "/jobs", lim)
		return rec
	}
	if rec := post(url.Values{}); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<strong>more than 3</strong>") ||
		!strings.Contains(rec.Body.String(), "the first 3 of them") {
		t.Errorf("confirmation over the limit: %d\n%s", rec.Code, rec.Body.String())
	}
	rec := post(url.Values{"confirm": {"yes"}})
	if f := rec.Result().Cookies(); rec.Code != http.StatusSeeOther || len(f) == 0 || !strings.Contains(f[0].Value, "Stopped+there") {
		t.Errorf("confirmed over the limit: %d %v", rec.Code, f)
	}
}
