package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

// openStore opens the backend the --store URL names: sqlite:PATH or
// sqlite://PATH (so sqlite:///var/lib/tether.db is an absolute path).
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
	case "postgres", "postgresql", "redis":
		return nil, fmt.Errorf("store %q: the %s backend is not built yet; use sqlite:PATH", url, scheme)
	default:
		return nil, fmt.Errorf("store %q: unknown scheme %q; use sqlite:PATH", url, scheme)
	}
}
