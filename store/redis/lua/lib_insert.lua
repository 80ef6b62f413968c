-- lib_insert.lua: inserting a new job, the one path of enqueue.lua and of a
-- schedule's fire (schedfire.lua), so both write the same hash, indexes,
-- unique key and wake-up.

-- queued are the queues this script has named in the queues set.
local queued = {}

-- insert_job writes the job whose 16 fields start after ARGV[b] (as
-- enqueue.lua documents them) at now, and returns its id. sc and sf, the
-- schedule that fired it and the slot (ms), are nil for a producer's job.
-- The caller has checked that no unfinished job holds its unique key.
local function insert_job(b, now, sc, sf)
  local id, q, uk = ARGV[b + 1], ARGV[b + 2], ARGV[b + 10]
  local hasuk = uk ~= ''
  uk = string.sub(uk, 2)
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
  if sc then h[#h + 1], h[#h + 2], h[#h + 3], h[#h + 4] = 'sc', sc, 'sf', sf end
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
  if sc then redis.call('ZADD', sjkey(sc), 0, id) end
  if hasuk then redis.call('SET', ukey(q, uk), id) end
  if not queued[q] then
    queued[q] = true
    redis.call('SADD', P .. 'queues', q)
  end
  return id
end
