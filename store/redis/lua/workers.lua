-- lib: base
-- workers lists the workers heard from since a cut-off with the jobs they
-- hold. ARGV: prefix, cut-off ('-inf' for all). Replies per worker {id,
-- last sign of life, started_at, queues, labels, held ids}.
local out = {}
local ws = redis.call('ZRANGEBYSCORE', P .. 'workers', ARGV[2], '+inf', 'WITHSCORES')
for x = 1, #ws, 2 do
  local w = ws[x]
  local h = redis.call('HMGET', wkey(w), 'sa', 'qs', 'lb')
  out[#out + 1] = {w, ws[x + 1], h[1], h[2], h[3], redis.call('SMEMBERS', wjkey(w))}
end
return out
