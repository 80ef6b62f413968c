package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// page is one dashboard page: its route, the static part above its panels
// (forms), and its live panels.
type page struct {
	path   string
	title  string
	nav    string // the navigation entry it highlights
	head   func(rq *request) templ.Component
	panels []panel
}

// panel is one live part of a page: rendered with the page, and alone as
// ?fragment=id when a change concerns one of its topics.
type panel struct {
	id string
	// topics are the change notifications it follows, space-separated:
	// jobs, workers, queues, nodes, schedules (see feed).
	topics string
	build  func(rq *request) (templ.Component, error)
}

// request is what a panel builder needs of one request.
type request struct {
	r   *http.Request
	ctx context.Context
	now time.Time
	// back is this page's own URL (path and query), where its forms
	// return after an action.
	back string
	// base is scheme://host as the browser reached us, for the curl lines
	// of empty states.
	base string
	// single is set on a page of one panel, whose heading the page's own
	// title already is.
	single bool
	// queueList memoizes the queues for the request's panels and forms.
	queueList []*store.Queue
}

// queues returns the store's queues, read once per request: several panels
// and forms of a page need them.
func (d *dash) queues(rq *request) ([]*store.Queue, error) {
	if rq.queueList != nil {
		return rq.queueList, nil
	}
	qs, err := d.store.QueueList(rq.ctx, &store.QueueListParams{Now: rq.now})
	if err != nil {
		return nil, err
	}
	if qs == nil {
		qs = []*store.Queue{}
	}
	rq.queueList = qs
	return qs, nil
}

// heading is a panel's heading, or "" when the page's title says it.
func (rq *request) heading(title string) string {
	if rq.single {
		return ""
	}
	return title
}

func (rq *request) query(key string) string { return rq.r.URL.Query().Get(key) }

// errNotFound makes the page answer 404 (a job that does not exist).
var errNotFound = errors.New("not found")

func (d *dash) newRequest(r *http.Request) *request {
	q := r.URL.Query()
	q.Del("fragment")
	back := r.URL.Path
	if enc := q.Encode(); enc != "" {
		back += "?" + enc
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &request{r: r, ctx: r.Context(), now: d.now(), back: back, base: scheme + "://" + r.Host}
}

// servePage renders the whole page, or one panel of it when the request
// names a fragment.
func (d *dash) servePage(p page) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rq := d.newRequest(r)
		rq.single = len(p.panels) == 1
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if id := r.URL.Query().Get("fragment"); id != "" {
			d.serveFragment(w, rq, p, id)
			return
		}
		lay := layout{Title: p.title, Nav: p.nav, Flash: takeFlash(w, r), NowMS: rq.now.UnixMilli(),
			NodeID: d.cfg.NodeID, Version: d.cfg.Version}
		if p.head != nil {
			lay.Head = p.head(rq)
		}
		status := http.StatusOK
		for _, pn := range p.panels {
			c, err := d.buildPanel(rq, pn)
			switch {
			case errors.Is(err, errNotFound):
				status = http.StatusNotFound
				lay.Title = "Not found"
			case errors.Is(err, store.ErrUnavailable):
				status = http.StatusServiceUnavailable
				lay.Title = "Store unavailable"
			case isBadInput(err):
				status = http.StatusBadRequest
			}
			lay.Panels = append(lay.Panels, c)
		}
		writeStatus(w, status)
		d.render(rq, w, layoutView(lay))
	}
}

func (d *dash) serveFragment(w http.ResponseWriter, rq *request, p page, id string) {
	for _, pn := range p.panels {
		if pn.id != id {
			continue
		}
		c, err := d.buildPanel(rq, pn)
		switch {
		case errors.Is(err, errNotFound):
			writeStatus(w, http.StatusNotFound)
		case isBadInput(err):
			writeStatus(w, http.StatusBadRequest)
		case errors.Is(err, store.ErrUnavailable):
			writeStatus(w, http.StatusServiceUnavailable)
		}
		d.render(rq, w, c)
		return
	}
	http.Error(w, "no panel "+id+" on this page", http.StatusNotFound)
}

// writeStatus writes the page's status; a 503 (the store does not
// answer) says when to try again, as the API's do.
func writeStatus(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(store.RetryUnavailable/time.Second)))
	}
	w.WriteHeader(status)
}

// buildPanel builds a panel inside its frame; a failing build shows its
// error in place of the panel rather than failing the page.
func (d *dash) buildPanel(rq *request, pn panel) (templ.Component, error) {
	body, err := pn.build(rq)
	if err != nil {
		switch {
		case errors.Is(err, errNotFound), isBadInput(err):
		case errors.Is(err, store.ErrUnavailable):
			d.log.Warn("dashboard panel: store unavailable", "panel", pn.id, "err", err)
		default:
			d.log.Error("dashboard panel failed", "panel", pn.id, "err", err)
		}
		body = panelError(err)
	}
	return panelFrame(pn.id, pn.topics, body), err
}

func (d *dash) render(rq *request, w http.ResponseWriter, c templ.Component) {
	if err := c.Render(rq.ctx, w); err != nil {
		d.log.Warn("render dashboard", "path", rq.r.URL.Path, "err", err)
	}
}

// notFound answers unknown paths with a page that links home. Like every
// error page it names no node and no version: a prober sees them most, on
// a server without tokens or on a path the session check lets through.
func (d *dash) notFound(w http.ResponseWriter, r *http.Request) {
	d.messagePage(w, r, http.StatusNotFound, "Not found", notFoundView(r.URL.Path))
}

// crossOrigin answers a refused cross-origin POST: nothing was done. The
// request came from another site's page, so it names no node and no
// version either.
func (d *dash) crossOrigin(w http.ResponseWriter, r *http.Request) {
	d.messagePage(w, r, http.StatusForbidden, "Refused", crossOriginView())
}

// messagePage answers with a page whose one panel is body. Error pages name
// no node and no version (see notFound).
func (d *dash) messagePage(w http.ResponseWriter, r *http.Request, status int, title string, body templ.Component) {
	rq := d.newRequest(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	d.render(rq, w, layoutView(layout{Title: title, NowMS: rq.now.UnixMilli(), Panels: []templ.Component{body}}))
}

// safeBack returns the local path a form asked to return to, or def when
// it names none or another site.
func safeBack(back, def string) string {
	u, err := url.Parse(back)
	if back == "" || err != nil || u.Scheme != "" || u.Host != "" || u.User != nil ||
		len(u.Path) == 0 || u.Path[0] != '/' || (len(back) > 1 && (back[1] == '/' || back[1] == '\\')) {
		return def
	}
	u.Fragment = ""
	return u.String()
}
