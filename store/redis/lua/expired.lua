-- lib: base
-- expired lists up to limit running jobs whose lease expired, by queue.
-- It only reads: reap.lua ends each one, checking again. ARGV: prefix,
-- now, limit. Replies the ids. Cost: O(Q log N + limit), Q queues and N a
-- queue's running jobs.
local now, limit = ARGV[2], tonumber(ARGV[3])
local out = {}
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
  if #out >= limit then break end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', qkey(q, 'run'), '-inf', now, 'LIMIT', 0, limit - #out)) do
    out[#out + 1] = id
  end
end
return out
