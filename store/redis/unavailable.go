package redis

import (
	"context"
	"errors"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
)

// unavailable is the one place this backend translates go-redis's
// failures: a hook on the client through which every command, script and
// pipeline passes, marking store.ErrUnavailable (see down) on both the
// error returned and each command's own, which .Result() reads.
type unavailable struct{}

var _ goredis.Hook = unavailable{}

func (unavailable) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (unavailable) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		return mark(ctx, cmd, next(ctx, cmd))
	}
}

func (unavailable) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			mark(ctx, cmd, cmd.Err())
		}
		return store.Unavailable(ctx, err, down)
	}
}

// mark marks err, cmd's failure, in cmd too and returns it.
func mark(ctx context.Context, cmd goredis.Cmder, err error) error {
	if marked := store.Unavailable(ctx, err, down); marked != err {
		cmd.SetErr(marked)
		return marked
	}
	return err
}

// down reports redis-server's and go-redis's own signs of a server that
// cannot answer now: no connection free in time, a dataset still loading
// after a restart, a script hogging the server (BUSY), a primary gone or a
// replica answering for it mid-failover, the connection limit reached.
// Network failures and timeouts count without it (store.Unavailable).
func down(err error) bool {
	return errors.Is(err, goredis.ErrPoolTimeout) || goredis.IsLoadingError(err) ||
		goredis.HasErrorPrefix(err, "BUSY ") || goredis.IsMasterDownError(err) ||
		goredis.IsReadOnlyError(err) || goredis.IsTryAgainError(err) || goredis.IsMaxClientsError(err)
}
