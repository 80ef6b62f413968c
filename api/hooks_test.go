package api_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api"
	"github.com/tetherq/tether/api/webhook"
)

// The hooks of the tests, one per scheme, and their secrets.
var (
	ghSecret     = "gh-secret"
	stripeSecret = "whsec_stripe_secret"
	swKey        = []byte("standard webhooks key")
	swSecret     = "whsec_" + base64.StdEncoding.EncodeToString(swKey)
	hooksFile    = `{"hooks": [
		{"name": "gh", "queue": "gh", "kind": "github.event", "scheme": "github", "secrets": ["old-secret", "` + ghSecret + `"]},
		{"name": "sw", "queue": "sw", "kind": "sw.event", "scheme": "standard-webhooks", "secrets": ["` + swSecret + `"]},
		{"name": "st", "queue": "st", "kind": "stripe.event", "scheme": "stripe", "secrets": ["` + stripeSecret + `"]},
		{"name": "open", "queue": "open", "kind": "open.event", "scheme": "none", "headers": ["X-Source"]}]}`
)

func withHooks(c *api.Config) { withHooksFile(hooksFile)(c) }

// withHooksFile configures the hooks of a hooks file.
func withHooksFile(file string) option {
	return func(c *api.Config) {
		hooks, err := webhook.Parse([]byte(file))
		if err != nil {
			panic(err)
		}
		c.Hooks = hooks
	}
}

type hookAnswer struct {
	JobID string `json:"job_id"`
}

func (r *response) jobID() string {
	r.t.Helper()
	var v hookAnswer
	r.into(&v)
	if v.JobID == "" {
		r.t.Fatalf("no job_id in %s", r.Body)
	}
	return v.JobID
}

// github sends body to the gh hook as delivery id, signed with secret.
func (e *env) github(delivery, secret, body string, header ...string) *response {
	e.t.Helper()
	h := append([]string{"X-GitHub-Event", "push", "X-GitHub-Delivery", delivery,
		"X-Hub-Signature-256", webhook.SignGitHub([]byte(secret), []byte(body))}, header...)
	return e.do("POST", "/v1/hooks/gh", body, h...)
}

func TestHookGitHub(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks)
	body := `{"ref": "refs/heads/main", "commits": [1, 2]}`
	id := e.github("d-1", ghSecret, body).want(http.StatusAccepted).jobID()

	j := e.do("GET", "/v1/jobs/"+id, nil).want(200).job()
	if j.Queue != "gh" || j.Kind != "github.event" || j.State != "available" {
		t.Errorf("job %+v", j)
	}
	want := `{"body":{"commits":[1,2],"ref":"refs/heads/main"},"headers":{"content-type":"application/json","x-github-delivery":"d-1","x-github-event":"push"}}`
	if got := canonical(t, j.Payload); got != want {
		t.Errorf("payload\n%s\nwant\n%s", got, want)
	}

	// The same delivery again: the same job, 200.
	if again := e.github("d-1", ghSecret, body).want(http.StatusOK).jobID(); again != id {
		t.Errorf("duplicate answered %s, want %s", again, id)
	}
	// A sender that reuses the id with another (correctly signed) body
	// still gets the first job: the id names the event.
	if again := e.github("d-1", ghSecret, `{"other": true}`).want(http.StatusOK).jobID(); again != id {
		t.Errorf("duplicate with another body answered %s, want %s", again, id)
	}
	// Even once the job is gone (pruned or deleted), the id is kept.
	e.do("DELETE", "/v1/jobs/"+id, nil).want(http.StatusNoContent)
	if again := e.github("d-1", ghSecret, body).want(http.StatusOK).jobID(); again != id {
		t.Errorf("duplicate after delete answered %s, want %s", again, id)
	}
	// The old secret of a rotation still verifies; a new delivery is a new job.
	if other := e.github("d-2", "old-secret", `{"ref": "refs/heads/dev"}`).want(http.StatusAccepted).jobID(); other == id {
		t.Error("a new delivery got the old job")
	}
	// Past the dedupe window (72 h by default) the id is forgotten.
	e.clock.Advance(72*time.Hour + time.Second)
	e.github("d-1", ghSecret, body).want(http.StatusAccepted)
}

// GitHub's signature covers the body but not X-GitHub-Delivery: whoever
// captured one delivery (a logging proxy, a leaked request log) could
// replay it under fresh ids, each verifying, each a new job. A signed body
// seen within dedupe_ms is the same delivery, whatever its id.
func TestHookGitHubReplayUnderNewID(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks)
	body := `{"action": "created", "sender": {"login": "ada"}}`
	sig := webhook.SignGitHub([]byte(ghSecret), []byte(body))
	id := e.github("d-1", ghSecret, body).want(http.StatusAccepted).jobID()
	e.clock.Advance(time.Hour)
	replay := e.do("POST", "/v1/hooks/gh", body, "X-GitHub-Event", "push", "X-GitHub-Delivery", "d-forged",
		"X-Hub-Signature-256", sig)
	if got := replay.want(http.StatusOK).jobID(); got != id {
		t.Errorf("replay under a new id answered %s, want the first job %s", got, id)
	}
	// The body is what counts, not which secret signed it.
	if got := e.github("d-forged-2", "old-secret", body).want(http.StatusOK).jobID(); got != id {
		t.Errorf("replay signed with the other secret answered %s, want %s", got, id)
	}
	// The id still names its delivery: GitHub's own redelivery of d-1,
	// even re-serialised, is the first job too.
	if got := e.github("d-1", ghSecret, `{"action":"created","sender":{"login":"ada"}}`).want(http.StatusOK).jobID(); got != id {
		t.Errorf("redelivery of d-1 answered %s, want %s", got, id)
	}
	// Another body under a new id is another delivery.
	if got := e.github("d-2", ghSecret, `{"action": "deleted"}`).want(http.StatusAccepted).jobID(); got == id {
		t.Error("another body got the first job")
	}
	var list struct{ Jobs []job }
	e.do("GET", "/v1/jobs?queue=gh", nil).want(200).into(&list)
	if len(list.Jobs) != 2 {
		t.Errorf("%d jobs, want 2", len(list.Jobs))
	}
	// GitHub signs no timestamp: past dedupe_ms the body is forgotten, and a
	// replay is a new job (docs/security.md, "Replays").
	e.clock.Advance(72 * time.Hour)
	e.github("d-forged-3", ghSecret, body).want(http.StatusAccepted)
}

func TestHookGitHubRefused(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks)
	body := `{"ref": "refs/heads/main"}`
	sig := webhook.SignGitHub([]byte(ghSecret), []byte(body))
	changed := strings.Replace(body, "main", "maim", 1)
	var details []string
	for _, res := range []*response{
		e.do("POST", "/v1/hooks/gh", changed, "X-GitHub-Delivery", "d-1", "X-Hub-Signature-256", sig),
		e.github("d-1", "wrong-secret", body),
		e.do("POST", "/v1/hooks/gh", body, "X-GitHub-Delivery", "d-1"),
		e.do("POST", "/v1/hooks/gh", body, "X-GitHub-Delivery", "d-1", "X-Hub-Signature-256", "sha256=zz"),
	} {
		details = append(details, res.problem(http.StatusUnauthorized, "bad_signature")["detail"].(string))
	}
	for _, d := range details[1:] {
		if d != details[0] {
			t.Errorf("details differ, telling what failed: %q", details)
		}
	}
	// Verified but without its delivery id: refused, naming the header.
	e.do("POST", "/v1/hooks/gh", body, "X-Hub-Signature-256", sig).field("X-GitHub-Delivery")
	var list struct{ Jobs []job }
	e.do("GET", "/v1/jobs", nil).want(200).into(&list)
	if len(list.Jobs) != 0 {
		t.Errorf("refused deliveries made %d jobs", len(list.Jobs))
	}
}

func TestHookStandardWebhooks(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks)
	body := `{"type":"invoice.paid"}`
	send := func(id string, ts time.Time, sig string) *response {
		return e.do("POST", "/v1/hooks/sw", body, "webhook-id", id,
			"webhook-timestamp", strconv.FormatInt(ts.Unix(), 10), "webhook-signature", sig)
	}
	now := e.clock.Now()
	sign := func(key []byte, id string, ts time.Time) string {
		return webhook.SignStandard(key, id, ts.Unix(), []byte(body))
	}
	wrong := sign([]byte("not the key"), "msg_1", now)
	id := send("msg_1", now, wrong+" "+sign(swKey, "msg_1", now)).want(http.StatusAccepted).jobID()
	if again := send("msg_1", now, sign(swKey, "msg_1", now)).want(http.StatusOK).jobID(); again != id {
		t.Errorf("duplicate answered %s, want %s", again, id)
	}
	old := now.Add(-10 * time.Minute)
	send("msg_2", old, sign(swKey, "msg_2", old)).problem(http.StatusUnauthorized, "bad_signature")
	send("msg_3", now, sign(swKey, "msg_other", now)).problem(http.StatusUnauthorized, "bad_signature")
	send("msg_4", now, wrong).problem(http.StatusUnauthorized, "bad_signature")
	// Without webhook-id, even a signature over an empty id does not
	// verify: 401 bad_signature like any failure (not 400 naming the
	// header), and no job.
	send("", now, sign(swKey, "", now)).problem(http.StatusUnauthorized, "bad_signature")
	// The id is signed, so the body is no second name: another message
	// with the same body is another job (unlike github).
	if other := send("msg_5", now, sign(swKey, "msg_5", now)).want(http.StatusAccepted).jobID(); other == id {
		t.Error("another message with the same body got the first job")
	}
	var list struct{ Jobs []job }
	e.do("GET", "/v1/jobs?queue=sw", nil).want(200).into(&list)
	if len(list.Jobs) != 2 {
		t.Errorf("%d jobs, want the two accepted", len(list.Jobs))
	}

	j := e.do("GET", "/v1/jobs/"+id, nil).want(200).job()
	want := `{"body":{"type":"invoice.paid"},"headers":{"content-type":"application/json","webhook-id":"msg_1","webhook-timestamp":"` +
		strconv.FormatInt(now.Unix(), 10) + `"}}`
	if got := canonical(t, j.Payload); got != want {
		t.Errorf("payload %s, want %s", got, want)
	}
}

func TestHookStripe(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks)
	body := `{"id": "evt_1", "object": "event", "type": "charge.succeeded"}`
	send := func(ts time.Time, b string) *response {
		return e.do("POST", "/v1/hooks/st", b,
			"Stripe-Signature", webhook.SignStripe([]byte(stripeSecret), ts.Unix(), []byte(b)))
	}
	now := e.clock.Now()
	id := send(now, body).want(http.StatusAccepted).jobID()
	// Stripe retries carry a new timestamp, and the same event id.
	if again := send(now.Add(time.Minute), body).want(http.StatusOK).jobID(); again != id {
		t.Errorf("duplicate answered %s, want %s", again, id)
	}
	send(now.Add(-10*time.Minute), strings.Replace(body, "evt_1", "evt_2", 1)).problem(http.StatusUnauthorized, "bad_signature")
	send(now, `{"object": "event"}`).field("id")
}

func TestHookNoneNeedsToken(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks, withTokens)
	body := `{"n":1}`
	e.do("POST", "/v1/hooks/open", body).problem(http.StatusUnauthorized, "unauthorized")
	e.do("POST", "/v1/hooks/open", body, bearer("work")...).problem(http.StatusForbidden, "forbidden")
	id := e.do("POST", "/v1/hooks/open", body, "Authorization", "Bearer prod", "Idempotency-Key", "k1",
		"X-Source", "ci", "traceparent", traceParent).want(http.StatusAccepted).jobID()
	again := e.do("POST", "/v1/hooks/open", body, "Authorization", "Bearer adm", "Idempotency-Key", "k1").
		want(http.StatusOK).jobID()
	if again != id {
		t.Errorf("duplicate answered %s, want %s", again, id)
	}
	j := e.do("GET", "/v1/jobs/"+id, nil, bearer("adm")...).want(200).job()
	if got := canonical(t, j.Payload); got != `{"body":{"n":1},"headers":{"content-type":"application/json","x-source":"ci"}}` {
		t.Errorf("payload %s", got)
	}
	var traced struct{ Trace struct{ Traceparent string } }
	e.do("GET", "/v1/jobs/"+id, nil, bearer("adm")...).want(200).into(&traced)
	if traced.Trace.Traceparent != traceParent {
		t.Errorf("a hook delivery with a traceparent header: trace %+v", traced.Trace)
	}
	// The same Idempotency-Key on POST /v1/jobs is another key: a producer
	// cannot claim a hook's delivery ids, nor the other way round.
	e.do("POST", "/v1/jobs", `{"kind":"k"}`, "Authorization", "Bearer prod", "Idempotency-Key", "k1").want(http.StatusCreated)

	// A signed hook needs no token: its signature is the credential.
	e.github("d-1", ghSecret, body).want(http.StatusAccepted)
}

func TestHookBodyNotJSON(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks)
	body := "payload=%7B%22a%22%3A1%7D"
	id := e.github("d-1", ghSecret, body, "Content-Type", "application/x-www-form-urlencoded").
		want(http.StatusAccepted).jobID()
	j := e.do("GET", "/v1/jobs/"+id, nil).want(200).job()
	var p struct {
		Body struct{ Base64 string } `json:"body"`
	}
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if raw, _ := base64.StdEncoding.DecodeString(p.Body.Base64); string(raw) != body {
		t.Errorf("payload %s", j.Payload)
	}
}

func TestHookUnknownAndTooLarge(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks, withMaxBody(64))
	e.do("POST", "/v1/hooks/nope", `{}`).problem(http.StatusNotFound, "not_found")
	big := `{"pad":"` + strings.Repeat("x", 100) + `"}`
	e.github("d-1", ghSecret, big).problem(http.StatusRequestEntityTooLarge, "payload_too_large")
}

func TestHookMetrics(t *testing.T) {
	t.Parallel()
	e := setup(t, withHooks)
	e.github("d-1", ghSecret, `{}`).want(http.StatusAccepted)
	e.github("d-1", ghSecret, `{}`).want(http.StatusOK)
	e.github("d-2", "wrong", `{}`).want(http.StatusUnauthorized)
	contains(t, string(e.do("GET", "/metrics", nil).want(200).Body),
		`tether_hook_deliveries_total{hook="gh",result="accepted"} 1`+"\n",
		`tether_hook_deliveries_total{hook="gh",result="duplicate"} 1`+"\n",
		`tether_hook_deliveries_total{hook="gh",result="bad_signature"} 1`+"\n",
		`tether_hook_deliveries_total{hook="st",result="accepted"} 0`+"\n",
	)
}

// Hook names may contain ':', and so may delivery ids: the delivery "c" of
// hook "a:b" and the delivery "b:c" of hook "a" are two deliveries. Before
// dedupe keys carried the name's length, both were "hook:a:b:c", so whoever
// held a token for the unsigned hook "a" could send Idempotency-Key "b:c"
// and have the signed hook's delivery "c" answered as a duplicate, never
// enqueued.
func TestHookKeysDoNotCollide(t *testing.T) {
	t.Parallel()
	e := setup(t, withTokens, withHooksFile(`{"hooks": [
		{"name": "a", "kind": "open.event", "scheme": "none"},
		{"name": "a:b", "kind": "github.event", "scheme": "github", "secrets": ["`+ghSecret+`"]},
		{"name": "a:b:c", "kind": "github.event", "scheme": "github", "secrets": ["`+ghSecret+`"]}]}`))
	planted := e.do("POST", "/v1/hooks/a", `{"planted": true}`, "Authorization", "Bearer prod",
		"Idempotency-Key", "b:c").want(http.StatusAccepted).jobID()
	github := func(hook, delivery, body string) *response {
		return e.do("POST", "/v1/hooks/"+hook, body, "X-GitHub-Delivery", delivery,
			"X-Hub-Signature-256", webhook.SignGitHub([]byte(ghSecret), []byte(body)))
	}
	id := github("a:b", "c", `{"real": 1}`).want(http.StatusAccepted).jobID()
	if id == planted {
		t.Fatal("hook a:b's delivery c was taken for hook a's Idempotency-Key b:c")
	}
	// Nor may a hook's name and its delivery id trade characters with
	// another hook's: a:b:c with "x" against a:b with "c:x".
	first := github("a:b:c", "x", `{"real": 2}`).want(http.StatusAccepted).jobID()
	if other := github("a:b", "c:x", `{"real": 3}`).want(http.StatusAccepted).jobID(); other == first {
		t.Error("hook a:b's delivery c:x was taken for hook a:b:c's delivery x")
	}
	// Idempotency-Keys of POST /v1/jobs never reach a hook's record, even
	// shaped like one, old layout or new.
	for _, key := range []string{"hook:a:b:y", "hook/3:a:b/id:y", ":a:b:y", "a:b:y"} {
		e.do("POST", "/v1/jobs", `{"kind":"k"}`, "Authorization", "Bearer prod", "Idempotency-Key", key).
			want(http.StatusCreated)
	}
	github("a:b", "y", `{"real": 4}`).want(http.StatusAccepted)
}

// canonical re-marshals JSON with sorted keys.
func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
