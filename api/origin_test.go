package api_test

import (
	"net/http"
	"testing"

	"github.com/tetherq/tether/api"
)

// TestHostCheck: with AllowedHosts, a request whose Host is another name
// (DNS rebinding: a page's own name resolving to the server) is 403 and
// changes nothing; the allowed names pass with any port, and the probes
// pass whatever the Host.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *api.Config) { c.AllowedHosts = []string{"localhost", "127.0.0.1", "[::1]"} })
	for _, host := range []string{"localhost:8080", "127.0.0.1:1", "[::1]:8080", "LOCALHOST", "localhost.:80", "127.0.0.1"} {
		e.do("GET", "/v1/queues", nil, "Host", host).want(http.StatusOK)
	}
	for _, host := range []string{"rebound.example:8080", "127.0.0.1.rebound.example", "localhost.rebound.example", ""} {
		e.do("POST", "/v1/jobs", `{"kind":"k","queue":"q"}`, "Host", host).problem(http.StatusForbidden, "forbidden")
		e.do("GET", "/v1/queues", nil, "Host", host).problem(http.StatusForbidden, "forbidden")
	}
	e.do("GET", "/healthz", nil, "Host", "rebound.example").want(http.StatusOK)
	e.do("GET", "/readyz", nil, "Host", "rebound.example").want(http.StatusOK)
	var list struct{ Jobs []job }
	e.do("GET", "/v1/jobs", nil, "Host", "localhost:8080").want(http.StatusOK).into(&list)
	if len(list.Jobs) != 0 {
		t.Errorf("a refused request enqueued %d jobs", len(list.Jobs))
	}
}

// TestOpenAPIRefusesCrossSiteWrites: without tokens, a write that a browser
// sent for another site's page is 403 and changes nothing; same-origin
// pages and clients that are not browsers (no Origin, no Sec-Fetch-Site)
// pass, and so do reads.
func TestOpenAPIRefusesCrossSiteWrites(t *testing.T) {
	t.Parallel()
	e := setup(t)
	spec := `{"kind":"k","queue":"q"}`
	for _, header := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "http://evil.example"},
		{"Origin", "http://example.com:8081"},
	} {
		e.do("POST", "/v1/jobs", spec, header...).problem(http.StatusForbidden, "forbidden")
		e.do("POST", "/v1/queues/q/pause", nil, header...).problem(http.StatusForbidden, "forbidden")
	}
	var list struct{ Jobs []job }
	e.do("GET", "/v1/jobs", nil, "Sec-Fetch-Site", "cross-site").want(http.StatusOK).into(&list)
	if len(list.Jobs) != 0 {
		t.Errorf("a refused request enqueued %d jobs", len(list.Jobs))
	}
	e.do("POST", "/v1/jobs", spec).want(http.StatusCreated)
	e.do("POST", "/v1/jobs", spec, "Sec-Fetch-Site", "same-origin").want(http.StatusCreated)
	e.do("POST", "/v1/jobs", spec, "Sec-Fetch-Site", "none").want(http.StatusCreated)
	e.do("POST", "/v1/jobs", spec, "Origin", "http://example.com").want(http.StatusCreated)

	// With tokens a browser cannot send one on its own: no such check.
	withAuth := setup(t, withTokens)
	withAuth.do("POST", "/v1/jobs", spec, append(bearer("prod"), "Sec-Fetch-Site", "cross-site")...).want(http.StatusCreated)
}
