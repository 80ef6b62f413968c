-- lib: base
-- pause pauses ('1') or resumes ('0') a queue, creating it if needed; a
-- resume wakes leasers. ARGV: prefix, queue, paused. Replies {'ok', wakes()}.
local q = ARGV[2]
redis.call('SADD', P .. 'queues', q)
if ARGV[3] == '1' then
  redis.call('HSET', qkey(q, 'm'), 'paused', '1')
else
  redis.call('HDEL', qkey(q, 'm'), 'paused')
  wake_all(q)
end
return {'ok', wakes()}
