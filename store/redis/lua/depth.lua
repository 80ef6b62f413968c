-- lib: base hours
-- depth records each sampled queue's backlog for one minute and drops the
-- queue's minutes older than the cutoff, for depth.go. Each queue's
-- samples are the zset {q}:depth, scored by minute, members
-- "minute:available:scheduled"; the key expires a retention after its last
-- sample, so a queue that is gone leaves nothing behind. Each sample also
-- keeps its hour's deepest (lib_hours' note_depth). ARGV: prefix,
-- minute in ms, cutoff in ms, retention in seconds, then (queue,
-- available, scheduled) per queue. Replies how many samples it wrote and
-- minutes it dropped.
local minute, cutoff, ttl = ARGV[2], ARGV[3], ARGV[4]
local n = 0
for i = 5, #ARGV, 3 do
  local k = qkey(ARGV[i], 'depth')
  redis.call('ZREMRANGEBYSCORE', k, minute, minute)
  local member = minute .. ':' .. ARGV[i + 1] .. ':' .. ARGV[i + 2]
  redis.call('ZADD', k, minute, member)
  n = n + 1 + redis.call('ZREMRANGEBYSCORE', k, '-inf', '(' .. cutoff)
  redis.call('EXPIRE', k, ttl)
  note_depth(ARGV[i], tonumber(minute) - tonumber(minute) % HOUR, tonumber(minute), member,
    tonumber(ARGV[i + 1]) + tonumber(ARGV[i + 2]), tonumber(cutoff), ttl)
end
return n
