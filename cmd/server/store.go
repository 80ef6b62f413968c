package main

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/redis"
	"github.com/tetherq/tether/store/sqlite"
)

// openStore opens the backend the --store URL names: sqlite:PATH or
// sqlite://PATH (so sqlite:///var/lib/tether.db is an absolute path),
// postgres://… (or postgresql://…), redis://… or rediss://…. Its errors
// name --store, and never show the URL's password. The drivers' own lines
// (migrations applied, go-redis's dial failures) go to log.
func openStore(ctx context.Context, url string, log *slog.Logger) (store.Store, error) {
	log = log.With("component", "store")
	scheme, rest, ok := strings.Cut(url, ":")
	if !ok {
		return nil, fmt.Errorf("--store %q: want a URL such as sqlite:tether.db or postgres://… (see --help)", redact(url))
	}
	switch scheme {
	case "sqlite":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return nil, fmt.Errorf("--store %q: no file path after \"sqlite:\" (want sqlite:PATH)", url)
		}
		st, err := sqlite.OpenWith(ctx, path, sqlite.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--store %s: %w", url, err)
		}
		return st, nil
	case "postgres", "postgresql":
		st, err := postgres.Open(ctx, url, postgres.WithLogger(log))
		if err != nil {
			return nil, fmt.Errorf("--store %s: %w", redact(url), err)
		}
		return st, nil
	case "redis", "rediss":
		// go-redis logs through a global of its own (to stderr by
		// default): dial failures, dropped connections.
		goredis.SetLogger(redisLog{log})
		st, err := redis.Open(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("--store %s: %w", redact(url), err)
		}
		return st, nil
	default:
		return nil, fmt.Errorf("--store %q: unknown scheme %q; use sqlite:PATH, postgres://…, redis://… or rediss://…", redact(url), scheme)
	}
}

// redisLog is go-redis's logger: its lines, warnings all, go to the
// server's log.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "), "driver", "go-redis")
}

// redact hides the passwords in a store URL, for errors and logs: the
// user's in the authority, and a password= parameter (which pgx reads in a
// query and in a key=value DSN). It reads the URL by hand: one that
// net/url cannot parse (a bad port) must not show its password either.
func redact(raw string) string {
	raw = passwordParam.ReplaceAllString(raw, "${1}xxxxx")
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	authority, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(authority[:at], ":")
	if !hasPassword {
		return raw
	}
	return scheme + "://" + user + ":xxxxx" + authority[at:] + path
}

var passwordParam = regexp.MustCompile(`(?i)(\bpassword=)[^&\s]*`)
