package main

import (
	"context"
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/sqlite"
)

// openStore opens the backend the --store URL names: sqlite:PATH or
// sqlite://PATH (so sqlite:///var/lib/tether.db is an absolute path),
// postgres://… (or postgresql://…), redis://… or rediss://….
func openStore(ctx context.Context, url string) (store.Store, error) {
	scheme, rest, ok := strings.Cut(url, ":")
	if !ok {
		return nil, fmt.Errorf("store %q: want a URL such as sqlite:tether.db", url)
	}
	switch scheme {
	case "sqlite":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return nil, fmt.Errorf("store %q: no file path", url)
		}
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", url, err)
		}
		return st, nil
	case "postgres", "postgresql":
		st, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", redact(url), err)
		}
		return st, nil
	case "redis", "rediss":
		st, err := redis.Open(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", redact(url), err)
		}
		return st, nil
	default:
		return nil, fmt.Errorf("store %q: unknown scheme %q; use sqlite:PATH, postgres://… or redis://…", redact(url), scheme)
	}
}

// redact hides a password in a store URL, for errors and logs.
func redact(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = neturl.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
