//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tetherq/tether/client"
)

// verdict maps the child's end to the job's (see docs/workers.md):
//   - a lost lease: nothing, the runner settles nothing;
//   - killed by a signal during the runner's stop: released, the attempt
//     refunded (the job did not fail, the runner stopped it);
//   - killed by a signal otherwise: failed, "killed by signal N (name)";
//   - exit 0: acked with stdout as the result (over --max-result: failed
//     for good);
//   - a --fatal-exit-codes code: failed for good, to dead;
//   - the --snooze-exit-code: released after --snooze-delay;
//   - any other code: failed, "exit status N" and the tail of stderr.
func (w *cmdWorker) verdict(ctx context.Context, c *childProc, end childExit, stopped bool) (json.RawMessage, error) {
	if cause := context.Cause(ctx); errors.Is(cause, client.ErrLeaseLost) {
		return nil, cause
	}
	stderr := c.stderr.String()
	switch {
	case end.err != "":
		return nil, fmt.Errorf("start %s: %s", w.cfg.cmd[0], end.err)
	case end.signal != 0 && stopped:
		return nil, client.Snooze(0)
	case end.signal != 0:
		return nil, errors.New(withTail(fmt.Sprintf("killed by signal %d (%v)", int(end.signal), end.signal), stderr))
	case end.code == 0 && c.stdout.over:
		return nil, client.Permanent(fmt.Errorf("stdout is over --max-result (%d bytes)", w.cfg.maxResult))
	case end.code == 0:
		return resultOf(c.stdout.buf.Bytes()), nil
	case end.code == w.cfg.snoozeCode:
		return nil, client.Snooze(w.cfg.snoozeDelay)
	}
	err := errors.New(withTail(fmt.Sprintf("exit status %d", end.code), stderr))
	if w.cfg.fatal[end.code] {
		return nil, client.Permanent(err)
	}
	return nil, err
}

// resultOf is stdout as a result: JSON as it is, other text as a JSON
// string (without its final newline), nothing as null.
func resultOf(out []byte) json.RawMessage {
	t := bytes.TrimSpace(out)
	switch {
	case len(t) == 0:
		return nil
	case json.Valid(t):
		return t
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(out), "\n"), "\r")
	b, _ := json.Marshal(s)
	return b
}

// withTail is msg, then stderr's tail on the lines after it.
func withTail(msg, stderr string) string {
	if stderr == "" {
		return msg
	}
	return msg + "\n" + stderr
}
