-- lib: base job end
-- reap ends one running job past its expiry as timed_out, if it still is.
-- ARGV: prefix, id, now, jitter, the message (store.ReapMessage). Replies
-- {'ok', wakes(), job} or {'skip', 0}. Cost: O(log N + the job's fields).
local id, now = ARGV[2], ARGV[3]
local j = load(id)
if not j or j.s ~= 'running' or num(j.ex) > num(now) then return {'skip', 0} end
local d = decide(j, 'timeout', nil, 0, num(now), tonumber(ARGV[4]))
end_delivery(id, j, d, now, 'reap', {err = ARGV[5], lost = true})
return {'ok', wakes(), reply(id, j)}
