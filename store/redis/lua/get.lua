-- lib: base job
-- get reads a job and its closed attempts, oldest first, in one snapshot
-- (the open attempt of a running job, and the settling attempt of a
-- succeeded one, are on the job).
-- ARGV: prefix, id, how many of the newest closed attempts to read.
-- Replies {'ok', 0, job, attempts} or {'nf', 0}.
local id, newest = ARGV[2], tonumber(ARGV[3])
local j = load(id)
if not j then return {'nf', 0} end
return {'ok', 0, reply(id, j), redis.call('LRANGE', akey(id), -newest, -1)}
