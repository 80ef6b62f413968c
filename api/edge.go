package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// Edge is what every request to the server passes first, the dashboard's
// too: a request id, a deadline for the body, the Host check of
// Config.AllowedHosts, and panic recovery. Register it before the routes.
func (a *API) Edge(next http.Handler) http.Handler {
	return RequestID(a.bodyDeadline(a.checkHost(a.recoverPanic(next))))
}

// bodyDeadline gives every request BodyTimeout to arrive whole: the
// connection's read deadline, which net/http resets before the
// connection's next request. Without it a client that sends headers and
// then trickles its body, or never sends it, holds a connection and a
// handler for good; a GET too, since net/http drains a small unread body
// before it answers. Set per request rather than as the server's
// ReadTimeout, so that a long-poll (liftDeadlines) and the dashboard's
// event stream can lift it once they have their request.
func (a *API) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(a.cfg.BodyTimeout))
		next.ServeHTTP(w, r)
	})
}

// requestIDRE is what an incoming X-Request-Id must look like to be kept:
// short, and safe to log as is.
var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:/+=-]{1,128}$`)

type requestIDKey struct{}

// RequestID takes the request's X-Request-Id (a proxy's) or makes one,
// answers it in X-Request-Id and puts it in the context, where the log
// handler of LogRequestIDs finds it.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDRE.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// RequestIDFrom returns the request id in ctx, "" outside a request.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// LogRequestIDs wraps h so that every record logged with a request's
// context carries its request_id. Wrapping twice adds it once.
func LogRequestIDs(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestIDFrom(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// recoverPanic turns a handler's panic into a problem+json 500 and logs
// the panic with its stack. http.ErrAbortHandler passes through: it is how
// a handler asks net/http to drop the connection.
func (a *API) recoverPanic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			a.log.ErrorContext(r.Context(), "handler panicked", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if ww.Status() == 0 {
				writeProblem(ww, newProblem(codeInternal, "the server failed to handle the request"))
			}
		}()
		next.ServeHTTP(ww, r)
	})
}
