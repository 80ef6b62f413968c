package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// limitBody refuses a declared Content-Length over limit at once and caps
// what handlers can read at limit, so an oversized body is never read whole.
// How long the body may take is Edge's concern (bodyDeadline).
func limitBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				writeProblem(w, newProblem(codePayloadTooLarge,
					fmt.Sprintf("the request body exceeds the limit of %d bytes", limit)))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			next.ServeHTTP(w, r)
		})
	}
}

// readAll reads the whole body. A body that stops arriving before the read
// deadline is the client's fault: a 400, not an internal error.
func readAll(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil, &fieldError{msg: "the request body did not arrive in time"}
	}
	return body, err
}

// readBody returns the request body after checking its Content-Type: none,
// or application/json with any parameters. It returns *http.MaxBytesError
// when the body is over the limit set by limitBody.
func readBody(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, &fieldError{field: "Content-Type", msg: "must be application/json"}
		}
	}
	return readAll(r)
}

// decodeRequest reads the body into v; an empty body decodes as {}.
func decodeRequest(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeStrict(body, v, "")
}

// decodeStrict decodes one JSON object into v, refusing unknown fields,
// wrong types and trailing data. Errors are *fieldError naming the field
// with prefix before it (as in "jobs[3]."). Blank data decodes as {}.
func decodeStrict(data []byte, v any, prefix string) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		data = []byte("{}")
	}
	if data[0] != '{' {
		return &fieldError{field: strings.TrimSuffix(prefix, "."), msg: "must be a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, prefix)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &fieldError{field: strings.TrimSuffix(prefix, "."), msg: "trailing data after the JSON object"}
	}
	return nil
}

// jsonError turns an encoding/json error into a *fieldError.
func jsonError(err error, prefix string) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return &fieldError{field: prefix + typeErr.Field, msg: "must be " + jsonType(typeErr.Type)}
	case errors.As(err, &syntaxErr):
		return &fieldError{field: strings.TrimSuffix(prefix, "."),
			msg: fmt.Sprintf("malformed JSON at offset %d: %v", syntaxErr.Offset, syntaxErr)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &fieldError{field: strings.TrimSuffix(prefix, "."), msg: "malformed JSON: unexpected end"}
	}
	// encoding/json reports an unknown field only in its message.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if unq, uerr := strconv.Unquote(name); uerr == nil {
			name = unq
		}
		return &fieldError{field: prefix + name, msg: "is not a known field"}
	}
	return &fieldError{field: strings.TrimSuffix(prefix, "."), msg: "malformed JSON: " + err.Error()}
}

// jsonType names the JSON type a Go type decodes from.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// checker is a request body that validates its own fields.
type checker interface {
	check() error
}

// decode reads the body into req and validates it. On failure it answers
// the problem and returns false; the handler then just returns.
func (a *API) decode(w http.ResponseWriter, r *http.Request, req checker) bool {
	err := decodeRequest(r, req)
	if err == nil {
		err = req.check()
	}
	if err != nil {
		a.fail(w, r, err)
		return false
	}
	return true
}
