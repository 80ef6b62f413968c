package web

import (
	"net/http"
	"net/url"
	"strings"
)

// flashCookie carries an action's result across its 303 to the next page
// render, which shows it once and clears it.
const flashCookie = "tether_flash"

// flash is an action's result as the next page shows it.
type flash struct {
	OK      bool
	Message string
}

func setFlash(w http.ResponseWriter, f flash) {
	kind := "error"
	if f.OK {
		kind = "ok"
	}
	http.SetCookie(w, &http.Cookie{
		Name: flashCookie, Value: url.QueryEscape(kind + ":" + clip(f.Message, 500)), Path: "/",
		MaxAge: 60, HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
}

// takeFlash reads and clears the flash, if any.
func takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	v, err := url.QueryUnescape(c.Value)
	if err != nil {
		return nil
	}
	kind, msg, ok := strings.Cut(v, ":")
	if !ok || msg == "" {
		return nil
	}
	return &flash{OK: kind == "ok", Message: msg}
}
