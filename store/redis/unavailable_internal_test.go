package redis

import (
	"errors"
	"fmt"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// replyError is an error reply of redis-server, as go-redis types them.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// TestDown: redis-server's replies that mean "not now" count as down;
// replies that are answers do not.
func TestDown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		down bool
	}{
		{replyError("LOADING Redis is loading the dataset in memory"), true},
		{replyError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."), true},
		{replyError("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), true},
		{replyError("READONLY You can't write against a read only replica."), true},
		{replyError("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{replyError("ERR max number of clients reached"), true},
		{fmt.Errorf("lease: %w", goredis.ErrPoolTimeout), true},
		{replyError("NOSCRIPT No matching script. Please use EVAL."), false},
		{replyError("BUSYGROUP Consumer Group name already exists"), false},
		{replyError("OOM command not allowed when used memory > 'maxmemory'."), false},
		{replyError("ERR Error running script: user_script:1: bad"), false},
		{goredis.Nil, false},
		{errors.New("decode job: unexpected end of JSON input"), false},
	}
	for _, tt := range tests {
		if got := down(tt.err); got != tt.down {
			t.Errorf("down(%v) = %v, want %v", tt.err, got, tt.down)
		}
	}
}
