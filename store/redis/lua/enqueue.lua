-- lib: base job insert
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

local out = {}
local first
for i = 0, n - 1 do
  local b = 6 + i * 16
  local q, uk = ARGV[b + 2], ARGV[b + 10]
  local other, oj
  if uk ~= '' then other, oj = unique_holder(q, string.sub(uk, 2)) end
  if other then
    out[#out + 1] = reply(other, oj)
    first = first or other
  else
    local id = insert_job(b, now)
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
