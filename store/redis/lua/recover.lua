-- lib: base job end
-- recover rescues a chunk of orphans, each with a compare-and-set on (id,
-- owner, token, running): whoever runs it first wins, a racing replica or a
-- stale listing matches nothing. ARGV: prefix, now, node id, max rescues,
-- then five per orphan: id, owner, token, the owner's last sign of life
-- ('' unknown), the message (store.RescueMessage). Replies {'ok', wakes(),
-- id, payload, ...} for each orphan it won, the payload only when kept in
-- its own key (else false): JobRecover reads the hashes right after it, in
-- the same MULTI, which costs redis-server less than half of what building
-- the replies in Lua did. A chunk (store/redis/recover.go) pays the
-- script's fixed cost, its helpers' closures, once for all its orphans,
-- and sends one command per shared key for them all (a batch, lib_base):
-- per orphan it reads and writes its hash and appends to its history.
-- Cost: O(chunk × (log n + the job's fields)).
local now, node, maxr = ARGV[2], ARGV[3], tonumber(ARGV[4])
local out = {'ok', 0}
local won = 0
batch_begin()
for i = 5, #ARGV, 5 do
  local id, owner, token, lh = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local j = load(id)
  if j and j.s == 'running' and j.w == owner and j.t == token then
    if lh == '' then lh = nil end
    local d = decide(j, 'orphan', nil, maxr, num(now), 0)
    local attempt, started = j.a, j.sa or ''
    end_delivery(id, j, d, now, 'rescue', {err = ARGV[i + 4], rb = node, lh = lh, lost = true})
    won = won + 1
    -- The index of recent rescues (insights.go), by time.
    if d.outcome == 'orphaned' then
      write('ZADD', P .. 'rescues', now, cjson.encode({j = id, n = attempt, w = owner, s = started,
        f = now, rb = node, lh = lh or ''}))
    end
    out[#out + 1] = id
    out[#out + 1] = payload(id, j)
  end
end
batch_flush()
if won > 0 then
  redis.call('HINCRBY', P .. 'stats', 'rescues', won)
  redis.call('ZREMRANGEBYRANK', P .. 'rescues', 0, -10001) -- capped at the newest 10,000
end
out[2] = wakes()
return out
