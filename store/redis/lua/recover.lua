-- lib: base job end
-- recover rescues one orphan with a compare-and-set on (id, owner, token,
-- running): whoever runs it first wins, a racing replica or a stale
-- listing matches nothing. ARGV: prefix, id, owner, token, now, node id,
-- max rescues, the owner's last sign of life ('' unknown), the message
-- (store.RescueMessage). Replies
-- {'ok', wakes(), job} or {'skip', 0}.
local id, owner, token, now, node = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local j = load(id)
if not j or j.s ~= 'running' or j.w ~= owner or j.t ~= token then return {'skip', 0} end
local d = decide(j, 'orphan', nil, tonumber(ARGV[7]), num(now), 0)
local lh = ARGV[8]
if lh == '' then lh = nil end
local attempt, started = j.a, j.sa or ''
end_delivery(id, j, d, now, 'rescue', {err = ARGV[9], rb = node, lh = lh, lost = true})
redis.call('HINCRBY', P .. 'stats', 'rescues', 1)
-- The index of recent rescues (insights.go), by time, capped.
if d.outcome == 'orphaned' then
  redis.call('ZADD', P .. 'rescues', now, cjson.encode({j = id, n = attempt, w = owner, s = started,
    f = now, rb = node, lh = lh or ''}))
  redis.call('ZREMRANGEBYRANK', P .. 'rescues', 0, -10001)
end
return {'ok', wakes(), reply(id, j)}
