package web

import (
	"math"
	"net/http"
	"strconv"
)

// maxLoginForm bounds the login form's body: one token.
const maxLoginForm = 8 << 10

// LoginHandler serves /login: GET shows the form, POST takes an admin token
// once and answers 303 to / with a session cookie (HttpOnly,
// SameSite=Strict, Secure over HTTPS), or 401 with the form again; 429
// with Retry-After when cfg.Throttle refuses the address. A POST from
// another origin is refused with 403.
func LoginHandler(cfg SessionConfig) http.Handler {
	s := newSessions(cfg)
	cop := http.NewCrossOriginProtection()
	return noFraming(cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			if s.fromRequest(r) {
				http.Redirect(w, r, "/", http.StatusSeeOther)
				return
			}
			renderLogin(w, r, http.StatusOK, loginView{})
		case http.MethodPost:
			s.login(w, r)
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})))
}

func (s *sessions) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginForm)
	if err := r.ParseForm(); err != nil {
		// Too big, malformed, or cut off at the body deadline: no token
		// was given, so none was refused.
		renderLogin(w, r, http.StatusBadRequest, loginView{Unreadable: true})
		return
	}
	token := r.PostForm.Get("token")
	fp, id, ok := s.admin(token)
	if token != "" && s.throttle != nil {
		if wait, allowed := s.throttle.Try(r.RemoteAddr, id, s.now()); !allowed {
			secs := max(1, int(math.Ceil(wait.Seconds())))
			s.log.WarnContext(r.Context(), "dashboard login throttled", "remote", r.RemoteAddr)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			renderLogin(w, r, http.StatusTooManyRequests, loginView{RetryAfter: secs})
			return
		}
	}
	if !ok {
		s.log.WarnContext(r.Context(), "dashboard login refused", "remote", r.RemoteAddr)
		renderLogin(w, r, http.StatusUnauthorized, loginView{Failed: true})
		return
	}
	http.SetCookie(w, s.cookie(r, s.issue(fp), int(s.ttl.Seconds())))
	s.log.InfoContext(r.Context(), "dashboard login", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// LogoutHandler serves POST /logout: the session cookie is cleared and the
// answer is 303 to /login. The cookie holds no state on the server, so a
// copy of it stays valid until it expires; rotating the admin token or the
// session key ends every session at once.
func LogoutHandler(cfg SessionConfig) http.Handler {
	s := newSessions(cfg)
	cop := http.NewCrossOriginProtection()
	return noFraming(cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		http.SetCookie(w, s.cookie(r, "", -1))
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})))
}

func renderLogin(w http.ResponseWriter, r *http.Request, status int, v loginView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginPage(v).Render(r.Context(), w)
}
