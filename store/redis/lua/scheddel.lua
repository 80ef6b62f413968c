-- lib: base
-- scheddel deletes a schedule; the jobs it enqueued, and their index
-- sj:<name>, stay. ARGV: prefix, name, source ('' any). Replies {'ok', 0},
-- {'nf', 0} or {'invalid', 0} when the schedule's source is another.
local name, source = ARGV[2], ARGV[3]
local key = P .. 'sc:' .. name
local src = redis.call('HGET', key, 'src')
if not src then return {'nf', 0} end
if source ~= '' and src ~= source then return {'invalid', 0} end
redis.call('DEL', key)
redis.call('ZREM', P .. 'schedules', name)
redis.call('ZREM', P .. 'scdue', name)
return {'ok', 0}
