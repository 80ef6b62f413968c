package api

import (
	"net"
	"net/http"
	"strings"
)

// Without tokens the API trusts whoever reaches it, which on a loopback
// address means this machine's users. A web page in their browser is not
// one of them, yet it can reach the server two ways: by a request to
// 127.0.0.1 from its own origin (a cross-site write, which the browser
// sends even when it hides the answer), and by DNS rebinding, where the
// page's own host name comes to resolve to 127.0.0.1 and the browser
// counts the server as the page's origin. checkHost answers the second,
// sameOrigin the first.

// checkHost refuses with 403 forbidden a request whose Host is not one of
// Config.AllowedHosts (any port), when that list is set. /healthz and
// /readyz are exempt, as they are from tokens: probes reach a server by
// whatever address they have.
func (a *API) checkHost(next http.Handler) http.Handler {
	if len(a.hosts) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.hosts[hostName(r.Host)] || r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			next.ServeHTTP(w, r)
			return
		}
		a.refuse(r, codeForbidden, "")
		writeProblem(w, newProblem(codeForbidden, "this server does not answer to the host name in Host "+
			"(see --allowed-hosts): a page of another site may be trying to reach it through DNS rebinding"))
	})
}

// hostName is the host of a Host header or an --allowed-hosts entry,
// without port, brackets or a final dot, in lower case.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	return strings.ToLower(host)
}

// sameOrigin refuses with 403 forbidden an unsafe request (not GET, HEAD
// or OPTIONS) that a browser sent for a page of another origin: by
// Sec-Fetch-Site, or by an Origin whose host is not the request's Host.
// Clients that send neither header, every worker and script, pass. The
// API uses it only without tokens: a bearer token is never sent by a
// browser on its own.
func (a *API) sameOrigin(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.refuse(r, codeForbidden, "")
		writeProblem(w, newProblem(codeForbidden, "a browser page of another origin may not change this server "+
			"(Origin or Sec-Fetch-Site); this server has no tokens, so only same-origin pages and clients that are not browsers may"))
	}))
	return cop.Handler(next)
}
