package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// A scheduled job with an attempt behind it reads "retrying" in the job
// list and on its page; one never tried reads "scheduled".
func TestRetryingLabel(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.enqueue(store.JobSpec{Kind: "k", Queue: "q"})
	in := time.Hour
	retrying := e.lease("w", "q", 1)[0]
	if _, err := e.store.JobFail(t.Context(), &store.JobFailParams{ID: retrying.ID, Token: retrying.Lease.Token, Error: "later",
		RetryIn: &in, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	later := e.enqueue(store.JobSpec{Kind: "k", Queue: "later", RunAt: e.clock.Now().Add(time.Hour)})[0]
	row := func(body, id string) string {
		i := strings.Index(body, `data-job-id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no row of %s", id)
		}
		return body[i : i+strings.Index(body[i:], "</tr>")]
	}
	_, list := e.get("/jobs")
	if r := row(list, retrying.ID); !strings.Contains(r, `badge-retrying">retrying<`) {
		t.Errorf("/jobs: the retrying job's row reads %q", r)
	}
	if r := row(list, later.ID); !strings.Contains(r, `badge-scheduled">scheduled<`) {
		t.Errorf("/jobs: the delayed job's row reads %q", r)
	}
	if _, page := e.get("/jobs/" + retrying.ID); !strings.Contains(page, `badge-retrying">retrying<`) ||
		strings.Contains(page, `badge-scheduled"`) {
		t.Error("the retrying job's page does not read retrying")
	}
	// Once due, it reads available, as the API has it.
	e.clock.Advance(2 * time.Hour)
	if _, page := e.get("/jobs/" + retrying.ID); !strings.Contains(page, `badge-available">available<`) {
		t.Error("a due retry does not read available")
	}
}

// A rescued job's page tells of the rescue once, in the attempt that ended.
func TestOneRescueMessage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	_, page := e.get("/jobs/" + s.rescued.ID)
	if n := strings.Count(page, "stopped heartbeating"); n != 1 {
		t.Errorf("the rescued job's page tells of the rescue %d times, want once", n)
	}
	for _, want := range []string{"w-gone", "rescued by", "node-1", "orphaned"} {
		if !strings.Contains(page, want) {
			t.Errorf("the rescued job's page lacks %q", want)
		}
	}
	// Another error still shows at the top and in its attempt.
	if _, page := e.get("/jobs/" + s.dead.ID); strings.Count(page, "template missing: welcome") != 2 {
		t.Error("a failed job's error is not on its page and in its attempt")
	}
}

func TestOverviewNeedsAttention(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, body := e.get("/"); strings.Contains(body, `class="attention"`) || strings.Contains(body, "Nothing needs attention") {
		t.Error("an empty store's overview speaks of attention")
	}
	j := e.enqueue(store.JobSpec{Kind: "k", Queue: "q"})[0]
	e.lease("w", "q", 1)
	if _, err := e.store.JobAck(t.Context(), &store.JobAckParams{ID: j.ID, Token: e.job(j.ID).Lease.Token, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, body := e.get("/"); !strings.Contains(body, "Nothing needs attention") {
		t.Error("a calm store's overview does not say that nothing needs attention")
	}
	e.scene() // a dead job, a suspect worker holding a job
	_, body := e.get("/")
	i := strings.Index(body, `class="attention"`)
	if i < 0 {
		t.Fatal("the overview does not list what needs attention")
	}
	list := body[i : i+strings.Index(body[i:], "</ul>")]
	for _, want := range []string{
		`href="/dead"><strong>1</strong> dead job to retry or delete`,
		`href="/orphans"><strong>1</strong> job awaiting recovery`,
		`href="/workers"><strong>1</strong> suspect worker,`,
	} {
		if !strings.Contains(list, want) {
			t.Errorf("attention list lacks %q:\n%s", want, list)
		}
	}
}

// The job list says how many jobs its filter holds and pages both ways.
func TestJobListTotalAndPrevious(t *testing.T) {
	t.Parallel()
	e := setup(t)
	specs := make([]store.JobSpec, 120)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Queue: "q"}
	}
	e.enqueue(specs...)
	e.enqueue(store.JobSpec{Kind: "other", Queue: "r"})
	link := func(body, rel string) string {
		t.Helper()
		i := strings.Index(body, `rel="`+rel+`"`)
		if i < 0 {
			return ""
		}
		start := strings.LastIndex(body[:i], `href="`) + len(`href="`)
		return strings.ReplaceAll(body[start:start+strings.IndexByte(body[start:], '"')], "&amp;", "&")
	}
	rows := func(body string) string {
		var ids []string
		for _, part := range strings.Split(body, `data-job-id="`)[1:] {
			ids = append(ids, part[:36])
		}
		return strings.Join(ids, ",")
	}
	_, p1 := e.get("/jobs?queue=q")
	if !strings.Contains(p1, "120 jobs") || link(p1, "prev") != "" {
		t.Errorf("page 1: total or a previous link wrong")
	}
	if _, all := e.get("/jobs"); !strings.Contains(all, "121 jobs") {
		t.Error("/jobs does not count every job")
	}
	if _, k := e.get("/jobs?kind=k"); !strings.Contains(k, "Among 121 jobs") {
		t.Error("/jobs?kind=k does not say the kind filter is not counted")
	}
	_, p2 := e.get(link(p1, "next"))
	_, p3 := e.get(link(p2, "next"))
	if rows(p3) == "" || link(p3, "next") != "" {
		t.Fatalf("page 3 of 120 at 50 a page: rows %q, next %q", rows(p3), link(p3, "next"))
	}
	u, _ := url.Parse(link(p3, "prev"))
	if u.Query().Get("queue") != "q" {
		t.Errorf("previous link %q drops the filter", u)
	}
	if _, back := e.get(link(p3, "prev")); rows(back) != rows(p2) {
		t.Error("page 3's previous page is not page 2")
	}
	if _, back := e.get(link(p2, "prev")); rows(back) != rows(p1) {
		t.Error("page 2's previous page is not page 1")
	}
}
