package webhook_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/api/webhook"
)

func TestParse(t *testing.T) {
	t.Parallel()
	hooks, err := webhook.Parse([]byte(`{"hooks": [
		{"name": "gh", "queue": "gh", "kind": "github.event", "scheme": "github", "secrets": ["old", "new"],
		 "dedupe_ms": 3600000, "headers": ["X-Extra"]},
		{"name": "sw", "kind": "sw.event", "scheme": "standard-webhooks", "secrets": ["whsec_c2VjcmV0"], "tolerance_ms": 60000},
		{"name": "plain", "queue": "q", "kind": "k", "scheme": "none"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	gh, sw, plain := hooks[0], hooks[1], hooks[2]
	if gh.Name != "gh" || gh.Queue != "gh" || gh.Kind != "github.event" || len(gh.Keys) != 2 ||
		string(gh.Keys[1]) != "new" || gh.Dedupe != time.Hour || gh.Tolerance != webhook.DefaultTolerance ||
		len(gh.Headers) != 1 {
		t.Errorf("gh = %+v", gh)
	}
	if sw.Queue != "default" || string(sw.Keys[0]) != "secret" || sw.Tolerance != time.Minute || sw.Dedupe != webhook.DefaultDedupe {
		t.Errorf("sw = %+v", sw)
	}
	if plain.Scheme.Signed() || plain.Keys != nil {
		t.Errorf("plain = %+v", plain)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want string // in the error
	}{
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "github", "secret": "s"}]}`, `unknown field "secret"`},
		{`{"hook": []}`, `unknown field "hook"`},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "github"}]}`, "at least one secret"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "github", "secrets": [""]}]}`, "secrets[0] is empty"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "none", "secrets": ["s"]}]}`, "remove its secrets"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "svix", "secrets": ["s"]}]}`, "scheme must be one of"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "standard-webhooks", "secrets": ["whsec_%%%"]}]}`, "base64 key"},
		{`{"hooks": [{"name": "a b", "kind": "k", "scheme": "none"}]}`, "name must be"},
		{`{"hooks": [{"name": "a", "scheme": "none"}]}`, "kind must be"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "none", "dedupe_ms": 0}]}`, "dedupe_ms"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "none", "tolerance_ms": 90000000}]}`, "tolerance_ms"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "stripe", "secrets": ["s"], "tolerance_ms": 600000, "dedupe_ms": 1199999}]}`,
			"dedupe_ms (1199999) must be at least twice tolerance_ms (600000)"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "standard-webhooks", "secrets": ["whsec_c2VjcmV0"], "dedupe_ms": 599999}]}`,
			"at least twice tolerance_ms (300000)"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "none", "headers": ["bad header"]}]}`, "not a header name"},
		{`{"hooks": [{"name": "a", "kind": "k", "scheme": "none"}, {"name": "a", "kind": "k", "scheme": "none"}]}`, "used twice"},
		{`{"hooks": []} {}`, "trailing data"},
		{`{"hooks": [}`, "parse"},
	}
	for _, tt := range tests {
		_, err := webhook.Parse([]byte(tt.file))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", tt.file, err, tt.want)
		}
	}
	// Errors never quote a secret.
	_, err := webhook.Parse([]byte(`{"hooks": [{"name": "a", "kind": "k", "scheme": "standard-webhooks", "secrets": ["whsec_TOPSECRET!"]}]}`))
	if err == nil || strings.Contains(err.Error(), "TOPSECRET") {
		t.Errorf("error %v", err)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hooks.json")
	if err := os.WriteFile(path, []byte(`{"hooks": [{"name": "a", "kind": "k", "scheme": "none"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if hooks, err := webhook.Load(path); err != nil || len(hooks) != 1 {
		t.Errorf("Load = %v, %v", hooks, err)
	}
	if _, err := webhook.Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestHookVerifyDispatch(t *testing.T) {
	t.Parallel()
	ts := now.Unix()
	tests := []struct {
		hook   webhook.Hook
		header http.Header
		ok     bool
	}{
		{webhook.Hook{Scheme: webhook.SchemeGitHub, Keys: [][]byte{key}},
			http.Header{"X-Hub-Signature-256": {webhook.SignGitHub(key, body)}}, true},
		{webhook.Hook{Scheme: webhook.SchemeGitHub, Keys: [][]byte{key}}, http.Header{}, false},
		{webhook.Hook{Scheme: webhook.SchemeStripe, Keys: [][]byte{key}, Tolerance: window},
			http.Header{"Stripe-Signature": {webhook.SignStripe(key, ts, body)}}, true},
		{webhook.Hook{Scheme: webhook.SchemeStandard, Keys: [][]byte{key}, Tolerance: window},
			http.Header{"Webhook-Id": {"m"}, "Webhook-Timestamp": {"1893553445"},
				"Webhook-Signature": {webhook.SignStandard(key, "m", 1893553445, body)}}, true},
		{webhook.Hook{Scheme: webhook.SchemeNone}, http.Header{}, true},
		{webhook.Hook{Scheme: "other"}, http.Header{}, false},
	}
	for _, tt := range tests {
		err := tt.hook.Verify(tt.header, body, now)
		if (err == nil) != tt.ok {
			t.Errorf("%s %v: err = %v, want ok %v", tt.hook.Scheme, tt.header, err, tt.ok)
		}
	}
}

func TestDeliveryID(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 256)
	tests := []struct {
		scheme webhook.Scheme
		header http.Header
		body   string
		id     string // "!" for ErrNoDeliveryID
	}{
		{webhook.SchemeStandard, http.Header{"Webhook-Id": {"msg_1"}}, `{}`, "msg_1"},
		{webhook.SchemeGitHub, http.Header{"X-Github-Delivery": {"d-1"}}, `{}`, "d-1"},
		{webhook.SchemeGitHub, http.Header{}, `{}`, "!"},
		{webhook.SchemeGitHub, http.Header{"X-Github-Delivery": {long}}, `{}`, "!"},
		{webhook.SchemeStripe, http.Header{}, `{"id":"evt_1","object":"event"}`, "evt_1"},
		{webhook.SchemeStripe, http.Header{}, `{"object":"event"}`, "!"},
		{webhook.SchemeStripe, http.Header{}, `not json`, "!"},
		{webhook.SchemeStripe, http.Header{}, `{"id":7}`, "!"},
		{webhook.SchemeNone, http.Header{"Idempotency-Key": {"k"}}, `{}`, "k"},
		{webhook.SchemeNone, http.Header{}, `{}`, ""},
	}
	for _, tt := range tests {
		h := webhook.Hook{Scheme: tt.scheme}
		id, err := h.DeliveryID(tt.header, []byte(tt.body))
		switch {
		case tt.id == "!" && !errors.Is(err, webhook.ErrNoDeliveryID):
			t.Errorf("%s %v %s: id %q, err %v, want ErrNoDeliveryID", tt.scheme, tt.header, tt.body, id, err)
		case tt.id != "!" && (err != nil || id != tt.id):
			t.Errorf("%s %v %s: id %q, err %v, want %q", tt.scheme, tt.header, tt.body, id, err, tt.id)
		}
	}
}

func TestPayload(t *testing.T) {
	t.Parallel()
	h := webhook.Hook{Scheme: webhook.SchemeGitHub, Headers: []string{"X-Extra"}}
	header := http.Header{
		"Content-Type": {"application/json"}, "X-Github-Event": {"push"}, "X-Github-Delivery": {"d-1"},
		"X-Hub-Signature-256": {"sha256=00"}, "X-Extra": {"yes"}, "Cookie": {"c=1"},
	}
	tests := []struct {
		body string
		want string
	}{
		{`{"a": [1, 2]}`, `{"headers":{"content-type":"application/json","x-extra":"yes","x-github-delivery":"d-1","x-github-event":"push"},"body":{"a":[1,2]}}`},
		{`payload=%7B%7D`, `{"headers":{"content-type":"application/json","x-extra":"yes","x-github-delivery":"d-1","x-github-event":"push"},"body":{"base64":"cGF5bG9hZD0lN0IlN0Q="}}`},
		{``, `{"headers":{"content-type":"application/json","x-extra":"yes","x-github-delivery":"d-1","x-github-event":"push"},"body":{"base64":""}}`},
	}
	for _, tt := range tests {
		got := h.Payload(header, []byte(tt.body))
		if string(got) != tt.want {
			t.Errorf("Payload(%q) =\n%s\nwant\n%s", tt.body, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("Payload(%q) is not JSON", tt.body)
		}
	}
}
