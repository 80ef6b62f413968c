-- lib: base job
-- promote makes up to limit due scheduled jobs available, each queue's
-- earliest run_at first. ARGV: prefix, now, limit. Replies {'ok', wakes(),
-- count}. Cost: O(Q log N + limit), Q queues (one range read each, about a
-- microsecond when nothing is due) and N a queue's scheduled jobs; the Go
-- side passes a limit of at most 100 (store/redis/chunk.go).
local now, limit = ARGV[2], tonumber(ARGV[3])
local n = 0
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
  if n >= limit then break end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', qkey(q, 'sched'), '-inf', now, 'LIMIT', 0, limit - n)) do
    local j = load(id)
    if j and j.s == 'scheduled' then
      move(id, j, {s = 'available'})
      wake(q)
      n = n + 1
    else
      redis.call('ZREM', qkey(q, 'sched'), id) -- cannot happen; never loop on it
    end
  end
end
return {'ok', wakes(), n}
