package redis

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// luaFS holds one script per transition and the lib_*.lua parts they
// share. A script's first line names the parts it needs ("-- lib: base
// job"), which go before it in that order.
//
//go:embed lua/*.lua
var luaFS embed.FS

// scripts are the transitions by name (the file name without .lua).
type scripts struct {
	byName map[string]*goredis.Script
}

func newScripts() *scripts {
	files, err := fs.Glob(luaFS, "lua/*.lua")
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	sc := &scripts{byName: map[string]*goredis.Script{}}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "lua/"), ".lua")
		if strings.HasPrefix(name, "lib_") {
			continue
		}
		sc.byName[name] = goredis.NewScript(assemble(f))
	}
	return sc
}

// assemble puts the lib parts a script names before it.
func assemble(file string) string {
	src := mustRead(file)
	first, _, _ := strings.Cut(src, "\n")
	parts, ok := strings.CutPrefix(first, "-- lib: ")
	if !ok {
		panic("redis: " + file + " does not name its lib parts on its first line")
	}
	var b strings.Builder
	for _, part := range strings.Fields(parts) {
		b.WriteString(mustRead("lua/lib_" + part + ".lua"))
		b.WriteString("\n")
	}
	b.WriteString(src)
	return b.String()
}

func mustRead(file string) string {
	b, err := luaFS.ReadFile(file)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

// load puts every script in redis-server's script cache (SCRIPT LOAD), so
// calls send only its SHA. A server restarted since loads it again on the
// first NOSCRIPT answer.
func (sc *scripts) load(ctx context.Context, rdb *goredis.Client) error {
	for name, s := range sc.byName {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return fmt.Errorf("%s.lua: %w", name, err)
		}
	}
	return nil
}

func (sc *scripts) get(name string) *goredis.Script {
	s, ok := sc.byName[name]
	if !ok {
		panic("redis: no script " + name + ".lua")
	}
	return s
}

func (s *Store) argv(args []any) []any {
	return append([]any{s.prefix}, args...)
}

// call runs script name with the key prefix before args (EVALSHA, falling
// back to EVAL on NOSCRIPT) and returns its reply.
func (s *Store) call(ctx context.Context, name string, args ...any) (any, error) {
	v, err := s.scripts.get(name).Run(ctx, s.rdb, nil, s.argv(args)...).Result()
	if err != nil {
		return nil, fmt.Errorf("redis %s: %w", name, err)
	}
	return v, nil
}

// callEach runs script name once per argument list, pipelined in one round
// trip; each run is atomic on its own. Runs refused with NOSCRIPT (the
// server restarted) did nothing and go again once the script is loaded.
func (s *Store) callEach(ctx context.Context, name string, argLists [][]any) ([]any, error) {
	runs, err := s.callEachReading(ctx, name, argLists, nil)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(runs))
	for k, r := range runs {
		out[k] = r[0]
	}
	return out, nil
}

// callEachReading is callEach where the run of argLists[k] is followed by
// the commands reads(k), in a MULTI with it, so that what they read is as
// the run left it; unless reads is nil. Each run's replies are the
// script's, then its reads' in order.
func (s *Store) callEachReading(ctx context.Context, name string, argLists [][]any, reads func(k int) [][]any) ([][]any, error) {
	sc := s.scripts.get(name)
	out := make([][]any, len(argLists))
	pending := make([]int, len(argLists))
	for i := range pending {
		pending[i] = i
	}
	for try := 0; len(pending) > 0; try++ {
		cmds := make([]*goredis.Cmd, len(pending))
		_, _ = s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, k := range pending {
				eval := append([]any{"EVALSHA", sc.Hash(), 0}, s.argv(argLists[k])...)
				if reads == nil {
					cmds[i] = p.Do(ctx, eval...)
					continue
				}
				p.Do(ctx, "MULTI")
				p.Do(ctx, eval...)
				for _, r := range reads(k) {
					p.Do(ctx, r...)
				}
				cmds[i] = p.Do(ctx, "EXEC")
			}
			return nil
		})
		var again []int
		for i, k := range pending {
			replies, err := runReplies(cmds[i], reads != nil)
			switch {
			case goredis.HasErrorPrefix(err, "NOSCRIPT") && try == 0:
				again = append(again, k)
			case err != nil:
				return nil, fmt.Errorf("redis %s: %w", name, err)
			default:
				out[k] = replies
			}
		}
		if len(again) > 0 {
			if err := sc.Load(ctx, s.rdb).Err(); err != nil {
				return nil, fmt.Errorf("reload %s.lua: %w", name, err)
			}
		}
		pending = again
	}
	return out, nil
}

// runReplies are the replies of one run: the script's alone, or, for a
// MULTI (multi), the script's and then its reads'. The error is the
// script's (inside a MULTI, the first reply), or the command's.
func runReplies(cmd *goredis.Cmd, multi bool) ([]any, error) {
	v, err := cmd.Result()
	if err != nil {
		return nil, err
	}
	if !multi {
		return []any{v}, nil
	}
	replies, _ := v.([]any)
	if len(replies) == 0 {
		return nil, fmt.Errorf("unexpected reply to EXEC: %v", v)
	}
	if err, ok := replies[0].(error); ok {
		return nil, err
	}
	return replies, nil
}

// status is the head every transition's reply starts with.
type status struct {
	code string
	woke bool
	rest []any
}

func parseStatus(v any) (status, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 2 {
		return status{}, fmt.Errorf("redis: unexpected script reply %v", v)
	}
	code, _ := a[0].(string)
	woke, _ := a[1].(int64)
	return status{code: code, woke: woke == 1, rest: a[2:]}, nil
}

// run calls a script that replies with a status and returns it, its error
// mapped to the store's sentinel errors.
func (s *Store) run(ctx context.Context, name string, args ...any) (status, error) {
	v, err := s.call(ctx, name, args...)
	if err != nil {
		return status{}, err
	}
	st, err := parseStatus(v)
	if err != nil {
		return status{}, err
	}
	return st, errCode(st.code)
}
