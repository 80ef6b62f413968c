-- lib: base job insert
-- schedfire fires a schedule: a compare-and-set on its version and
-- next_fire_at, the overlap check of its last job, the jobs inserted as
-- enqueue.lua inserts them, and the counters. ARGV: prefix, name, expected
-- next_fire_at (ms), expected version, new next_fire_at, missed, trigger
-- ('1': next_fire_at neither checked nor moved, overlap ignored), now,
-- count, then per job enqueue.lua's 16 fields and its slot (ms). Replies
-- {'lost', 0}, or {'ok', wakes(), skipped, ids inserted...}.
local name, wantnf, wantv, nf = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local missed, trigger, now, n = ARGV[6], ARGV[7] == '1', ARGV[8], tonumber(ARGV[9])
local key = P .. 'sc:' .. name
local sc = redis.call('HMGET', key, 'v', 'nf', 'o', 'lj', 'p')
if not sc[1] or sc[1] ~= wantv or (not trigger and sc[2] ~= wantnf) then return {'lost', 0} end

local keep = n
if not trigger and sc[3] == 'skip' then
  local busy = false
  if sc[4] then
    local last = redis.call('HGET', jkey(sc[4]), 's')
    busy = last and not FINISHED[last]
  end
  if busy then keep = 0 else keep = math.min(n, 1) end
end
local out = {'ok', 0, n - keep}
local lastid, lastslot
for i = 0, keep - 1 do
  local b = 9 + i * 17
  lastslot = ARGV[b + 17]
  lastid = insert_job(b, now, name, lastslot)
  out[#out + 1] = lastid
end
if not trigger then
  redis.call('HSET', key, 'nf', nf)
  if sc[5] ~= '1' then redis.call('ZADD', P .. 'scdue', nf, name) end
end
redis.call('HINCRBY', key, 'mt', missed)
redis.call('HINCRBY', key, 'st', n - keep)
if lastid then
  redis.call('HINCRBY', key, 'ft', keep)
  redis.call('HSET', key, 'lf', lastslot, 'lj', lastid)
end
out[2] = wakes()
return out
