//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tetherq/tether/client"
)

// lineWriter is the runner's stderr, shared by its log and every child's
// lines: each write goes out whole.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// line writes prefix, b and a newline if b has none, in one write.
func (l *lineWriter) line(prefix string, b []byte) {
	buf := make([]byte, 0, len(prefix)+len(b)+1)
	buf = append(append(buf, prefix...), b...)
	if !bytes.HasSuffix(buf, []byte("\n")) {
		buf = append(buf, '\n')
	}
	_, _ = l.Write(buf)
}

// stdoutCapture keeps up to max bytes of a stream; over says more came.
type stdoutCapture struct {
	max  int64
	buf  bytes.Buffer
	over bool
}

func (c *stdoutCapture) fill(r io.Reader) {
	n, _ := io.Copy(&c.buf, io.LimitReader(r, c.max+1))
	if n > c.max {
		c.over = true
		c.buf.Truncate(int(c.max))
		_, _ = io.Copy(io.Discard, r) // the child must not block on a full pipe
	}
}

// tailBytes is how much of the end of stderr goes into last_error.
const tailBytes = 4 << 10

// stderrTail keeps the last tailBytes written to it.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
	cut bool // bytes were dropped from the front
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the tail from its first whole line (when the front was cut),
// in valid UTF-8, without surrounding blank space.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if i := bytes.IndexByte(b, '\n'); t.cut && i >= 0 && i < len(b)-1 {
		b = b[i+1:]
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), string(utf8.RuneError)))
}

// controlLine is one line the child writes to fd 3.
type controlLine struct {
	Progress *int   `json:"progress"`
	ExtendMS *int64 `json:"extend_ms"`
}

// maxExtendMS is the API's bound on extend_ms (24 h).
const maxExtendMS = 86_400_000

// control reads the child's fd 3 until every writer has closed it: each
// line {"progress": 0..100} and/or {"extend_ms": 1..86400000} goes to the
// runner; anything else is logged and ignored.
func (w *cmdWorker) control(ctx context.Context, r io.Reader, id string) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			w.log.Warn("ignored a control line over 4 KiB", "job", id)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if s := strings.TrimSpace(string(line)); s != "" {
			w.apply(ctx, s, id)
		}
		if err != nil {
			return
		}
	}
}

func (w *cmdWorker) apply(ctx context.Context, s, id string) {
	var m controlLine
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	err := d.Decode(&m)
	switch {
	case err == nil && m.Progress == nil && m.ExtendMS == nil:
		err = errors.New(`want "progress" or "extend_ms"`)
	case err == nil && m.Progress != nil && (*m.Progress < 0 || *m.Progress > 100):
		err = errors.New("progress must be 0..100")
	case err == nil && m.ExtendMS != nil && (*m.ExtendMS < 1 || *m.ExtendMS > maxExtendMS):
		err = errors.New("extend_ms must be 1..86400000")
	}
	if err != nil {
		w.log.Warn("ignored a control line", "job", id, "line", s, "err", err)
		return
	}
	if m.ExtendMS != nil {
		client.ExtendLease(ctx, time.Duration(*m.ExtendMS)*time.Millisecond)
	}
	if m.Progress != nil {
		client.ReportProgress(ctx, *m.Progress)
	}
}
