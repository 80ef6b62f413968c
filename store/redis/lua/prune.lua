-- lib: base job
-- prune deletes up to limit finished jobs past retention (succeeded and
-- cancelled finished before one cut-off, dead before another), oldest
-- first within a queue. ARGV: prefix, succeeded cut-off, dead cut-off,
-- limit. Replies the job count. Cost: O(3 Q log N + limit × a job's keys),
-- Q queues and N a finished set's size: the sets are read from their oldest
-- end, so the history past the cut-off is never walked. The Go side passes
-- a limit of at most 100 (store/redis/chunk.go).
local okb, deadb, limit = ARGV[2], ARGV[3], tonumber(ARGV[4])
local n = 0
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
  for _, set in ipairs({{'done', okb}, {'cancelled', okb}, {'dead', deadb}}) do
    if n >= limit then break end
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', qkey(q, set[1]), '-inf', '(' .. set[2], 'LIMIT', 0, limit - n)) do
      local j = load(id)
      if j then forget(id, j) else redis.call('ZREM', qkey(q, set[1]), id) end
      n = n + 1
    end
  end
end
return n
