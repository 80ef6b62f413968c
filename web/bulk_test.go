package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var (
	confirmForm = regexp.MustCompile(`<form method="post" action="([^"]*)" class="confirm-form">`)
	hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
)

// confirmation checks that rec is a confirmation page naming count, and
// returns its form as the browser would send it.
func (e *env) confirmation(rec *http.Response, body, count string) (string, url.Values) {
	e.t.Helper()
	if rec.StatusCode != http.StatusOK {
		e.t.Fatalf("answer %d, want 200 with a confirmation", rec.StatusCode)
	}
	if !strings.Contains(body, "<strong>"+count+"</strong>") || !strings.Contains(body, "Nothing has changed yet") {
		e.t.Fatalf("the confirmation does not name %s jobs:\n%s", count, body)
	}
	m := confirmForm.FindStringSubmatch(body)
	if m == nil {
		e.t.Fatalf("no confirmation form:\n%s", body)
	}
	form := url.Values{}
	i := strings.Index(body, m[0])
	for _, f := range hiddenField.FindAllStringSubmatch(body[i:i+strings.Index(body[i:], "</form>")], -1) {
		form.Add(html.UnescapeString(f[1]), html.UnescapeString(f[2]))
	}
	if form.Get("confirm") != "yes" {
		e.t.Fatalf("the confirmation form does not confirm: %v", form)
	}
	return html.UnescapeString(m[1]), form
}

// ask posts a form that must be confirmed first, checks that the answer
// names count and that nothing changed (unchanged), then confirms it and
// returns the flash it led to.
func (e *env) ask(path string, form url.Values, count string, unchanged func() bool) string {
	e.t.Helper()
	rec := e.post(path, form)
	action, confirmed := e.confirmation(rec.Result(), rec.Body.String(), count)
	if !unchanged() {
		e.t.Fatalf("POST %s changed the store before it was confirmed", path)
	}
	rec = e.post(action, confirmed)
	if rec.Code != http.StatusSeeOther {
		e.t.Fatalf("confirmed POST %s = %d, want 303", action, rec.Code)
	}
	_, page := e.follow(rec)
	return page
}

func (e *env) deadJobs(queues ...string) []*store.Job {
	e.t.Helper()
	var dead []*store.Job
	for i, q := range queues {
		j := e.enqueue(store.JobSpec{Kind: []string{"x", "y"}[i%2], Queue: q})[0]
		if got := e.lease("w", j.Queue, 1); len(got) != 1 || got[0].ID != j.ID {
			e.t.Fatalf("leased %v, want %s", got, j.ID)
		}
		dead = append(dead, e.fail(e.job(j.ID), "no", true))
	}
	return dead
}

func (e *env) states(jobs ...*store.Job) string {
	e.t.Helper()
	var out []string
	for _, j := range jobs {
		got, err := e.store.JobGet(e.t.Context(), &store.JobGetParams{ID: j.ID, Now: e.clock.Now()})
		switch {
		case err != nil:
			out = append(out, "gone")
		default:
			out = append(out, string(got.State))
		}
	}
	return strings.Join(out, " ")
}

func TestRetryDead(t *testing.T) {
	t.Parallel()
	e := setup(t)
	dead := e.deadJobs("a", "a", "b", "b", "b")
	allDead := func() bool { return e.states(dead...) == "dead dead dead dead dead" }

	// One job selected: done at once, nothing to confirm.
	rec := e.post("/dead/retry", url.Values{"back": {"/dead"}, "id": {dead[4].ID}})
	if _, page := e.follow(rec); rec.Code != http.StatusSeeOther || !strings.Contains(page, "Retried 1 job.") {
		t.Fatalf("retry one selected: %d", rec.Code)
	}
	if e.states(dead...) != "dead dead dead dead available" {
		t.Fatalf("retry one selected: %s", e.states(dead...))
	}
	e.fail(e.lease("w", "b", 1)[0], "no", true)

	page := e.ask("/dead/retry", url.Values{"back": {"/dead"}, "id": {dead[0].ID, dead[2].ID, dead[0].ID}}, "2", allDead)
	if !strings.Contains(page, "Retried 2 jobs.") || e.states(dead...) != "available dead available dead dead" {
		t.Errorf("retry 2 selected: %s", e.states(dead...))
	}
	rec = e.post("/dead/retry", url.Values{"back": {"/dead?queue=b&kind=y"}, "all": {"1"}, "queue": {"b"}, "kind": {"y"}})
	action, form := e.confirmation(rec.Result(), rec.Body.String(), "1")
	if !strings.Contains(rec.Body.String(), "dead jobs in queue b of kind y") {
		t.Error("the confirmation does not say which jobs")
	}
	if loc, page := e.follow(e.post(action, form)); loc != "/dead?queue=b&kind=y" || !strings.Contains(page, "Retried 1 job.") {
		t.Errorf("retry all matching b/y: back at %s", loc)
	}
	if e.states(dead...) != "available dead available available dead" {
		t.Errorf("retry all matching b/y: %s", e.states(dead...))
	}
	page = e.ask("/dead/retry", url.Values{"all": {"1"}}, "2", func() bool { return strings.Count(e.states(dead...), "dead") == 2 })
	if !strings.Contains(page, "Retried 2 jobs.") || strings.Contains(e.states(dead...), "dead") {
		t.Errorf("retry all: %s", e.states(dead...))
	}
	// Nothing left: no confirmation, a flash says so.
	if _, page := e.follow(e.post("/dead/retry", url.Values{"all": {"1"}})); !strings.Contains(page, "no job matches") {
		t.Error("retry all with none dead: no flash")
	}
	if _, page := e.follow(e.post("/dead/retry", url.Values{})); !strings.Contains(page, "no job was selected") {
		t.Error("retry with nothing selected: flash missing")
	}
}

// A bulk action on /jobs asks first, naming the jobs its state allows,
// and changes only those.
func TestBulkJobs(t *testing.T) {
	t.Parallel()
	e := setup(t)
	dead := e.deadJobs("a", "a", "b")
	waiting := e.enqueue(store.JobSpec{Kind: "x", Queue: "a"}, store.JobSpec{Kind: "y", Queue: "a"},
		store.JobSpec{Kind: "x", Queue: "a", RunAt: e.clock.Now().Add(time.Hour)})
	running := e.enqueue(store.JobSpec{Kind: "x", Queue: "r"})[0]
	e.lease("w", "r", 1)
	all := append(append(append([]*store.Job{}, dead...), waiting...), running)
	before := "dead dead dead available available scheduled running"
	same := func() bool { return e.states(all...) == before }

	// Cancel everything in queue a: the two waiting and the scheduled one.
	page := e.ask("/jobs/bulk", url.Values{"action": {"cancel"}, "all": {"1"}, "queue": {"a"}, "back": {"/jobs?queue=a"}}, "3", same)
	if !strings.Contains(page, "3 jobs.") || e.states(all...) != "dead dead dead cancelled cancelled cancelled running" {
		t.Fatalf("cancel all in a: %s", e.states(all...))
	}
	// Retry the selected: the dead one and a cancelled one, and one that
	// cannot be retried (running).
	before = e.states(all...)
	page = e.ask("/jobs/bulk", url.Values{"action": {"retry"}, "id": {dead[0].ID, waiting[0].ID, running.ID}}, "3", same)
	if !strings.Contains(page, "Retried 2 jobs.") || !strings.Contains(page, "1 could not be changed") {
		t.Errorf("retry selected: flash %q", page)
	}
	if e.states(all...) != "available dead dead available cancelled cancelled running" {
		t.Errorf("retry selected: %s", e.states(all...))
	}
	// Delete every job of kind y: counted by listing, running ones aside.
	before = e.states(all...)
	page = e.ask("/jobs/bulk", url.Values{"action": {"delete"}, "all": {"1"}, "kind": {"y"}}, "2", same)
	if !strings.Contains(page, "Deleted 2 jobs.") || e.states(all...) != "available gone dead available gone cancelled running" {
		t.Errorf("delete kind y: %s", e.states(all...))
	}
	// Delete one selected job: a delete always asks.
	before = e.states(all...)
	page = e.ask("/jobs/bulk", url.Values{"action": {"delete"}, "id": {dead[2].ID}}, "1", same)
	if !strings.Contains(page, "Deleted 1 job.") || e.states(dead[2]) != "gone" {
		t.Errorf("delete one selected: %s", e.states(all...))
	}
	// A state filter that the action does not apply to matches nothing.
	rec := e.post("/jobs/bulk", url.Values{"action": {"retry"}, "all": {"1"}, "state": {"running"}})
	if _, page := e.follow(rec); rec.Code != http.StatusSeeOther || !strings.Contains(page, "no job matches") {
		t.Errorf("retry all running: %d", rec.Code)
	}
}

// Bad input is refused with 400 before anything is counted or changed.
func TestBulkRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	dead := e.deadJobs("a", "a")
	many := url.Values{"action": {"retry"}}
	for i := range 1001 {
		many.Add("id", strings.Repeat("0", 30)+strings.Repeat("1", 6)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	for _, tt := range []struct {
		path string
		form url.Values
		want string
	}{
		{"/jobs/bulk", url.Values{"action": {"nope"}, "all": {"1"}}, "action"},
		{"/jobs/bulk", url.Values{}, "action"},
		{"/jobs/bulk", url.Values{"action": {"retry"}, "all": {"1"}, "queue": {"a b"}}, "queue"},
		{"/jobs/bulk", url.Values{"action": {"delete"}, "all": {"1"}, "state": {"gone"}}, "state"},
		{"/jobs/bulk", many, "at most 1,000"},
		{"/dead/retry", url.Values{"all": {"1"}, "reason": {"boredom"}}, "reason"},
		{"/dead/retry", url.Values{"all": {"1"}, "kind": {"{x}"}}, "kind"},
		{"/retries/retry", url.Values{"all": {"1"}, "queue": {"a/b"}}, "queue"},
	} {
		for _, confirm := range []string{"", "yes"} {
			form := url.Values{}
			for k, v := range tt.form {
				form[k] = v
			}
			form.Set("confirm", confirm)
			rec := e.post(tt.path, form)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "nothing was changed") ||
				!strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("POST %s %v = %d, want 400 naming %s", tt.path, tt.form, rec.Code, tt.want)
			}
		}
	}
	if e.states(dead...) != "dead dead" {
		t.Errorf("refused forms changed the store: %s", e.states(dead...))
	}
}

// Deleting one job asks first; a job that cannot be deleted is refused
// without a confirmation.
func TestDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.scene()
	page := e.ask("/jobs/"+s.dead.ID+"/delete", url.Values{"back": {"/jobs/" + s.dead.ID}}, "1", func() bool {
		return e.states(s.dead) == "dead"
	})
	if !strings.Contains(page, "Deleted job") || e.states(s.dead) != "gone" {
		t.Errorf("delete: %s", e.states(s.dead))
	}
	for _, tt := range []struct {
		id, flash string
	}{
		{s.running.ID, "not in a state that allows it"},
		{s.dead.ID, "does not exist"},
	} {
		rec := e.post("/jobs/"+tt.id+"/delete", url.Values{"back": {"/jobs/" + tt.id}})
		loc, page := e.follow(rec)
		if rec.Code != http.StatusSeeOther || !strings.Contains(page, tt.flash) {
			t.Errorf("delete %s: %d to %s, want 303 with %q", tt.id, rec.Code, loc, tt.flash)
		}
	}
	if e.states(s.running) != "running" {
		t.Error("a running job was deleted")
	}
}

func TestRetryRetryingNow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var retrying []*store.Job
	for _, q := range []string{"a", "a", "b"} {
		e.enqueue(store.JobSpec{Kind: "k", Queue: q})
		in := time.Hour
		j := e.lease("w", q, 1)[0]
		got, err := e.store.JobFail(t.Context(), &store.JobFailParams{ID: j.ID, Token: j.Lease.Token, Error: "later", RetryIn: &in, Now: e.clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		retrying = append(retrying, got)
	}
	if _, body := e.get("/retries"); !strings.Contains(body, `action="/retries/retry"`) || !strings.Contains(body, "3 retrying") {
		t.Error("/retries has no bulk form with the count")
	}
	rec := e.post("/retries/retry", url.Values{"back": {"/retries"}, "id": {retrying[1].ID}})
	if _, page := e.follow(rec); !strings.Contains(page, "Made available now 1 job.") || e.states(retrying...) != "scheduled available scheduled" {
		t.Errorf("retry one now: %s", e.states(retrying...))
	}
	page := e.ask("/retries/retry", url.Values{"all": {"1"}, "queue": {"a"}}, "1", func() bool {
		return e.states(retrying...) == "scheduled available scheduled"
	})
	if !strings.Contains(page, "1 job.") || e.states(retrying...) != "available available scheduled" {
		t.Errorf("retry all of a now: %s", e.states(retrying...))
	}
}
