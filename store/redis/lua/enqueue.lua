-- lib: base job
-- enqueue inserts a batch of jobs, in order, under optional idempotency
-- keys. ARGV: prefix, now, idempotency key ('' none), request hash, key TTL
-- in ms, count, then per job the 16 fields read below, then the request's
-- further keys (store.JobEnqueueParams.AlsoKeys, distinct). The first key
-- with a live record answers. Replies {'conflict'}, {'replay', 0, job or
-- {id}} or {'ok', wakes(), results}, one result per job: 0 for a new job, the
-- existing job for a unique_key match.
local now, ikey, ihash, ittl = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])
local idems = {}
if ikey ~= '' then
  idems[1] = P .. 'idem:' .. ikey
  for i = 7 + n * 16, #ARGV do idems[#idems + 1] = P .. 'idem:' .. ARGV[i] end
end
for _, idem in ipairs(idems) do
  local rec = redis.call('HMGET', idem, 'h', 'j', 'e')
  if rec[1] and num(rec[3]) > num(now) then
    if rec[1] ~= ihash then return {'conflict', 0} end
    local j = load(rec[2])
    if j then return {'replay', 0, reply(rec[2], j)} end
    return {'replay', 0, {rec[2]}}
  end
end

local out, queues = {}, {}
local first
for i = 0, n - 1 do
  local b = 6 + i * 16
  local id, q, uk = ARGV[b + 1], ARGV[b + 2], ARGV[b + 10]
  local hasuk = uk ~= ''
  uk = string.sub(uk, 2)
  local other, oj
  if hasuk then other, oj = unique_holder(q, uk) end
  if other then
    out[#out + 1] = reply(other, oj)
    first = first or other
  else
    -- The hot path of producers: the hash is written in one HSET, fields
    -- in a fixed order, the indexes directly (as index() would).
    local ra, s = ARGV[b + 5], 'available'
    if num(ra) > num(now) then s = 'scheduled' end
    local h = {'q', q, 'k', ARGV[b + 3], 'p', ARGV[b + 4], 'ra', ra, 'ma', ARGV[b + 6],
      'to', ARGV[b + 7], 'bb', ARGV[b + 8], 'bm', ARGV[b + 9], 'ca', now, 'a', '0', 'rc', '0', 's', s}
    if hasuk then h[#h + 1], h[#h + 2] = 'uk', uk end
    if ARGV[b + 11] ~= '' then h[#h + 1], h[#h + 2] = 'tg', ARGV[b + 11] end
    if ARGV[b + 12] ~= '' then h[#h + 1], h[#h + 2] = 'md', ARGV[b + 12] end
    if ARGV[b + 14] ~= '' then h[#h + 1], h[#h + 2] = 'tp', ARGV[b + 14] end
    if ARGV[b + 15] ~= '' then h[#h + 1], h[#h + 2] = 'ts', ARGV[b + 15] end
    if ARGV[b + 16] ~= '' then h[#h + 1], h[#h + 2] = 'ck', ARGV[b + 16] end
    local pl = ARGV[b + 13]
    local mode = string.sub(pl, 1, 1)
    if mode == 'i' then
      h[#h + 1], h[#h + 2] = 'pl', string.sub(pl, 2)
    elseif mode == 'k' then
      h[#h + 1], h[#h + 2] = 'pk', '1'
      redis.call('SET', pkey(id), string.sub(pl, 2))
    end
    redis.call('HSET', jkey(id), unpack(h))
    if s == 'available' then
      redis.call('ZADD', qkey(q, 'av'), avscore({p = ARGV[b + 4], ra = ra}), id)
      wake(q)
    else
      redis.call('ZADD', qkey(q, 'sched'), ra, id)
    end
    redis.call('ZADD', qkey(q, 'ids'), 0, id)
    if hasuk then redis.call('SET', ukey(q, uk), id) end
    if not queues[q] then
      queues[q] = true
      redis.call('SADD', P .. 'queues', q)
    end
    out[#out + 1] = 0
    first = first or id
  end
end
if first then
  for _, idem in ipairs(idems) do
    redis.call('HSET', idem, 'h', ihash, 'j', first, 'e', fmt(num(now) + num(ittl)))
    redis.call('PEXPIRE', idem, ittl)
  end
end
return {'ok', wakes(), out}
