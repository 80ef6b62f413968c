// Package web serves Tether's dashboard. For now it is one placeholder page
// at / that points to the JSON API; the templ dashboard replaces it.
package web

import (
	"html/template"
	"net/http"
)

// Config is what the dashboard shows about the server.
type Config struct {
	NodeID  string
	Version string
}

var page = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tether</title></head>
<body>
<h1>Tether — dashboard coming soon</h1>
<p>Meanwhile the JSON API answers:</p>
<ul>
<li><a href="/v1/queues">/v1/queues</a></li>
<li><a href="/v1/jobs">/v1/jobs</a></li>
<li><a href="/v1/workers">/v1/workers</a></li>
<li><a href="/v1/nodes">/v1/nodes</a></li>
<li><a href="/v1/stats">/v1/stats</a></li>
<li><a href="/openapi.yaml">/openapi.yaml</a></li>
<li><a href="/metrics">/metrics</a></li>
</ul>
<p><small>node {{.NodeID}}{{with .Version}}, version {{.}}{{end}}</small></p>
</body>
</html>
`))

// New returns the dashboard's handler: the page at /, 404 elsewhere.
func New(cfg Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = page.Execute(w, cfg)
	})
}
