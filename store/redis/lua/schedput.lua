-- lib: base
-- schedput writes fields of a schedule's hash sc:<name> under a
-- compare-and-set on its version, and keeps the schedules set (by name) and
-- the due set scdue (by next_fire_at, schedules not paused) in step. ARGV:
-- prefix, name, expected version ('0': no such schedule), then field/value
-- pairs. Counters and the last fire are never among them: a fire moves
-- those without a version change. Replies {'ok', 0} or {'conflict', 0}.
local name, want = ARGV[2], ARGV[3]
local key = P .. 'sc:' .. name
local v = redis.call('HGET', key, 'v') or '0'
if v ~= want then return {'conflict', 0} end
local set = {}
for i = 4, #ARGV do set[#set + 1] = ARGV[i] end
redis.call('HSET', key, unpack(set))
redis.call('ZADD', P .. 'schedules', 0, name)
local st = redis.call('HMGET', key, 'p', 'nf')
if st[1] == '1' then
  redis.call('ZREM', P .. 'scdue', name)
else
  redis.call('ZADD', P .. 'scdue', st[2], name)
end
return {'ok', 0}
