package web

import "net/http"

// noFraming forbids every other page to frame the dashboard, so none can
// overlay it and trick an admin into clicking its buttons (clickjacking).
// It wraps whole handlers, so that errors, redirects and static assets
// carry it as pages do: X-Frame-Options for older browsers, the CSP
// frame-ancestors directive for the rest.
func noFraming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}
