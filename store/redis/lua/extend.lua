-- lib: base job
-- extend pushes a running job's expiry to now + extend (or its timeout),
-- records progress and the owner's sign of life. ARGV: prefix, id, token,
-- now, extend in ms ('' for the timeout), progress ('' none). Replies
-- {'ok', 0, job}, {'lost'} or {'nf'}.
local id, token, now = ARGV[2], ARGV[3], ARGV[4]
local j = load(id)
if not j then return {'nf', 0} end
if j.s ~= 'running' or j.t ~= token then return {'lost', 0} end
local d = optnum(ARGV[5]) or num(j.to)
local ch = {ex = fmt(num(now) + d)}
if ARGV[6] ~= '' then ch.pr = ARGV[6] end
save(id, j, ch)
redis.call('ZADD', qkey(j.q, 'run'), j.ex, id)
touch(j.w, now)
return {'ok', 0, reply(id, j)}
