package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// TestOutage: with the network to Postgres cut (a proxy in between: the
// shared Postgres itself stays up for the other tests), every call fails
// with store.ErrUnavailable, pooled connections and new ones alike; once
// the network is back, the same store answers.
func TestOutage(t *testing.T) {
	t.Parallel()
	storetest.RunOutage(t, func(t *testing.T) *storetest.Outage {
		s, p := openViaProxy(t, "")
		return &storetest.Outage{
			Store:   s,
			Cut:     func(*testing.T) { p.Cut() },
			Restore: func(*testing.T) { p.Restore() },
		}
	})
}

// TestOutageStalled: a Postgres that takes connections in and never
// answers is unavailable too, once connect_timeout or the caller's
// deadline passes, not a hang.
func TestOutageStalled(t *testing.T) {
	t.Parallel()
	s, p := openViaProxy(t, "1")
	p.Stall()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Ping with a deadline, stalled = %v, want store.ErrUnavailable", err)
	}
	if _, err := s.JobGet(t.Context(), &store.JobGetParams{ID: "0193f1c2-0000-7000-8000-000000000000"}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("JobGet without a deadline, stalled = %v, want store.ErrUnavailable (connect_timeout)", err)
	}
	p.Restore()
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping after the stall = %v", err)
	}
}

// openViaProxy opens a store on a fresh schema through a proxy to the test
// Postgres, with connect_timeout seconds if not empty.
func openViaProxy(t *testing.T, connectTimeout string) (store.Store, *storetest.Proxy) {
	t.Helper()
	u, err := url.Parse(newSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	p := storetest.NewProxy(t, u.Host)
	u.Host = p.Addr()
	if connectTimeout != "" {
		q := u.Query()
		q.Set("connect_timeout", connectTimeout)
		u.RawQuery = q.Encode()
	}
	return openURL(t, u.String()), p
}
