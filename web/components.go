package web

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/tetherq/tether/store"
)

// errNoInsights is a panel's answer when the backend has no store.Insights.
var errNoInsights = errors.New("not available on this backend")

func isNoInsights(err error) bool { return errors.Is(err, errNoInsights) }

func isNotFound(err error) bool { return errors.Is(err, errNotFound) }

func isUnavailable(err error) bool { return errors.Is(err, store.ErrUnavailable) }

// enqueueCommand is a curl line that enqueues a job on this server.
func enqueueCommand(base, queue string) string {
	q := ""
	if queue != "" {
		q = fmt.Sprintf(`"queue":%q,`, queue)
	}
	return fmt.Sprintf(`curl -X POST %s/v1/jobs -H 'Content-Type: application/json' \
  -d '{%s"kind":"send_email","payload":{"to":"ada@example.com"}}'`, base, q)
}

// withQuery returns path with the query values set (empty values dropped).
func withQuery(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
