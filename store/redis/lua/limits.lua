-- lib: base
-- limits sets a queue's limits (store.Limits as JSON; '' clears them),
-- creating the queue if needed, and wakes every waiting leaser of it: a
-- limit raised or gone may let them lease. A changed rate starts from a
-- full bucket. 'slots' marks limits that count slots, whose freeing wakes
-- leasers (lib_base's ended). ARGV: prefix, queue, limits, slots ('1' or
-- '0'). Replies {'ok', wakes()}.
local q, lim = ARGV[2], ARGV[3]
local m = qkey(q, 'm')
redis.call('SADD', P .. 'queues', q)
redis.call('HDEL', m, 'tat', 'slots')
redis.call('DEL', qkey(q, 'kt'))
if lim == '' then
  redis.call('HDEL', m, 'lim')
else
  redis.call('HSET', m, 'lim', lim)
  if ARGV[4] == '1' then redis.call('HSET', m, 'slots', '1') end
end
wake_all(q)
return {'ok', wakes()}
