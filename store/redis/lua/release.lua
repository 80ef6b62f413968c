-- lib: base job end
-- release gives a running job back: attempt - 1, available, or scheduled
-- after a delay. ARGV: prefix, id, token, now, delay in ms. Replies
-- {'ok', wakes(), job}, {'lost'} or {'nf'}.
local id, token, now = ARGV[2], ARGV[3], ARGV[4]
local j = load(id)
if not j then return {'nf', 0} end
if repeated(j, token, 'release') then return {'ok', 0, reply(id, j)} end
if j.s ~= 'running' or j.t ~= token then return {'lost', 0} end
local d = decide(j, 'release', tonumber(ARGV[5]), 0, num(now), 0)
end_delivery(id, j, d, now, 'release', nil)
return {'ok', wakes(), reply(id, j)}
