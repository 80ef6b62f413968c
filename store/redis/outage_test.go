package redis_test

import (
	"testing"

	"github.com/tetherq/tether/store/storetest"
)

// TestOutage: with its redis-server killed, every call fails with
// store.ErrUnavailable; once it is started again (on the same port, its
// data back from the AOF), the same store answers, scripts reloaded.
func TestOutage(t *testing.T) {
	t.Parallel()
	storetest.RunOutage(t, func(t *testing.T) *storetest.Outage {
		srv := storetest.StartRedis(t, "--appendonly", "yes", "--appendfsync", "always")
		return &storetest.Outage{
			Store:   open(t, srv.URL(), ""),
			Cut:     func(*testing.T) { srv.Kill9() },
			Restore: func(*testing.T) { srv.Start() },
		}
	})
}
