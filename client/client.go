// Package client is a Go client for Tether's HTTP API, for producers that
// enqueue jobs and workers that lease, heartbeat and settle them. Every
// method is one HTTP request; a non-2xx answer comes back as an *Error.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client talks to one Tether server. Its zero value is not usable: set
// BaseURL, or use New. It is safe for concurrent use.
type Client struct {
	// BaseURL is the server's root, such as http://127.0.0.1:8080.
	BaseURL string
	// HTTP makes the requests; http.DefaultClient if nil. Workers that
	// long-poll many leases at once want a Transport with
	// MaxIdleConnsPerHost at least their concurrency.
	HTTP *http.Client
	// Token, when set, is sent as a bearer token.
	Token string
}

// New returns a client for the server at baseURL using http.DefaultClient.
func New(baseURL string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/")}
}

// do sends in (if not nil) as JSON and decodes a 2xx answer into out (if
// not nil). Any other status yields an *Error.
func (c *Client) do(ctx context.Context, method, path string, header http.Header, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() {
		// Drain what is left so the connection goes back to the pool.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return readError(resp)
	}
	if out == nil {
		return nil
	}
	if bd, ok := out.(bodyDecoder); ok {
		var b []byte
		if b, err = readBody(resp); err == nil {
			err = bd.decodeBody(b)
		}
	} else {
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	if err != nil {
		return fmt.Errorf("decode the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// maxSizedRead bounds the buffer readBody makes from a declared length.
const maxSizedRead = 64 << 20

// readBody reads a whole answer: into one buffer of the declared length
// when the server declared one (Tether's answers do), else as it comes.
func readBody(resp *http.Response) ([]byte, error) {
	n := resp.ContentLength
	if n <= 0 || n > maxSizedRead {
		return io.ReadAll(resp.Body)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		return nil, err
	}
	return b, nil
}

// bodyDecoder is an answer that decodes its whole body itself, as
// json.Decoder would (leaseAnswer).
type bodyDecoder interface {
	decodeBody(b []byte) error
}

// escape percent-encodes an id for a path segment (worker ids may hold
// '/' and ':').
func escape(id string) string { return url.PathEscape(id) }
