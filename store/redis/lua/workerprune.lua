-- lib: base
-- workerprune deletes up to limit workers silent since a cut-off that hold
-- nothing, read from the workers set by last sign of life. ARGV: prefix,
-- cut-off (ms), limit. Replies how many it deleted. Cost: O(log W + limit),
-- W workers.
local n = 0
for _, w in ipairs(redis.call('ZRANGEBYSCORE', P .. 'workers', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))) do
  if redis.call('SCARD', wjkey(w)) == 0 then
    redis.call('DEL', wkey(w), wjkey(w), wlkey(w))
    redis.call('ZREM', P .. 'workers', w)
    redis.call('ZREM', P .. 'holders', w)
    n = n + 1
  end
end
return n
