-- lib: base hours
-- minutes records one rolled minute of each queue in the zset {q}:min,
-- scored by minute, one member per kind ("minute<TAB>kind<TAB>succeeded
-- <TAB>dead<TAB>wait<TAB>run"; names hold no tab), replacing what an
-- earlier roll of the minute wrote, and drops the queue's minutes older
-- than the cutoff; the key expires a retention after its last write. Then
-- it keeps each of those queues' sums of the minute's hour (lib_hours'
-- note_minute: the minute's old members out, its new ones in).
-- For kindminute.go. ARGV: prefix, minute in ms, cutoff in ms, retention
-- in seconds, then (queue, member) pairs grouped by queue. Replies how
-- many minute members it wrote and dropped.
local minute, cutoff, ttl = ARGV[2], ARGV[3], ARGV[4]
local n, gone, added, queues = 0, {}, {}, {}
for i = 5, #ARGV, 2 do
  local q = ARGV[i]
  local k = qkey(q, 'min')
  if not gone[q] then
    queues[#queues + 1] = q
    gone[q], added[q] = redis.call('ZRANGEBYSCORE', k, minute, minute), {}
    redis.call('ZREMRANGEBYSCORE', k, minute, minute)
    n = n + redis.call('ZREMRANGEBYSCORE', k, '-inf', '(' .. cutoff)
    redis.call('EXPIRE', k, ttl)
  end
  redis.call('ZADD', k, minute, ARGV[i + 1])
  table.insert(added[q], ARGV[i + 1])
  n = n + 1
end
local hour = tonumber(minute) - tonumber(minute) % HOUR
for _, q in ipairs(queues) do note_minute(q, hour, gone[q], added[q], tonumber(cutoff), ttl) end
return n
