package redis

import (
	"strconv"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store/storetest"
)

// TestFmtSameAsPrintf: lib_base's fmt, whose fast path writes positive
// integers below 2^53 with '%d', writes every number as '%.0f' does.
func TestFmtSameAsPrintf(t *testing.T) {
	o, err := goredis.ParseURL(storetest.EnvURL(t, "TETHER_TEST_REDIS_URL", "scripts/redis.sh"))
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(o)
	defer rdb.Close()
	script := mustRead("lua/lib_base.lua") + `
local bad = {}
for i = 2, #ARGV do
  local n = tonumber(ARGV[i])
  if fmt(n) ~= string.format('%.0f', n) then bad[#bad + 1] = ARGV[i] .. ' -> ' .. fmt(n) end
end
return bad`
	const band = 4398046511104
	nums := []float64{1, 2, 9, 10, 99, 1764788000000, 1000*band + 1764788000000, 2000*band - 1,
		1<<53 - 1, 1 << 53, 1<<53 + 2, 1e20, 0, -1, -1764788000000, 0.4, 0.5, 1.5, 2.5, 123.7, 1e15 + 0.5}
	args := []any{"test:"}
	for _, n := range nums {
		args = append(args, strconv.FormatFloat(n, 'g', -1, 64))
	}
	bad, err := rdb.Eval(t.Context(), script, nil, args...).StringSlice()
	if err != nil || len(bad) > 0 {
		t.Errorf("fmt differs from '%%.0f' for %v (%v)", bad, err)
	}
}
