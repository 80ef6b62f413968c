package client

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// readBody reads an answer whole, whether the server declared its length
// or chunked it, and fails on one shorter than it declared.
func TestReadBody(t *testing.T) {
	body := bytes.Repeat([]byte(`{"jobs":[]} `), 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/declared":
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		case "/chunked":
			_, _ = w.Write(body[:5000])
			w.(http.Flusher).Flush()
			_, _ = w.Write(body[5000:])
		case "/short":
			w.Header().Set("Content-Length", strconv.Itoa(len(body)+10))
			_, _ = w.Write(body)
		}
	}))
	defer srv.Close()
	for _, c := range []struct {
		path    string
		wantErr bool
	}{{"/declared", false}, {"/chunked", false}, {"/short", true}} {
		resp, err := srv.Client().Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBody(resp)
		resp.Body.Close()
		if c.wantErr {
			if err == nil {
				t.Errorf("%s: read %d bytes and no error, want one", c.path, len(got))
			}
			continue
		}
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s: read %d bytes (%v), want the %d sent", c.path, len(got), err, len(body))
		}
		if c.path == "/declared" && cap(got) != len(body) {
			t.Errorf("%s: a buffer of %d for %d bytes, want one of the declared size", c.path, cap(got), len(body))
		}
	}
}
