-- lib: base
-- queues reads every queue's counts from the cardinalities of its state
-- sets and its retry set, never scanning jobs. ARGV: prefix, queue ('' for all).
-- Replies {rescues total, queues}, each queue {name, six counts in
-- lifecycle order, paused, retrying, oldest available run_at or false,
-- limits or false, throttle counts as reason/count pairs}.
local names = {ARGV[2]}
if ARGV[2] == '' then names = redis.call('SMEMBERS', P .. 'queues') end
local sets = {'sched', 'av', 'run', 'done', 'dead', 'cancelled'}

-- oldest finds the least run_at among available jobs: the first job of
-- each priority band holds its band's least run_at, so it visits one job
-- per priority present.
local function oldest(q)
  local av = qkey(q, 'av')
  local best = false
  local r = redis.call('ZRANGE', av, 0, 0, 'WITHSCORES')
  while #r > 0 do
    local ra = redis.call('HGET', jkey(r[1]), 'ra')
    if ra and (not best or num(ra) < num(best)) then best = ra end
    local band = math.floor(tonumber(r[2]) / BAND)
    r = redis.call('ZRANGEBYSCORE', av, fmt((band + 1) * BAND), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  end
  return best
end

local out = {}
for _, q in ipairs(names) do
  local row = {q}
  for _, s in ipairs(sets) do row[#row + 1] = redis.call('ZCARD', qkey(q, s)) end
  row[#row + 1] = redis.call('HGET', qkey(q, 'm'), 'paused') or '0'
  row[#row + 1] = redis.call('ZCARD', qkey(q, 'retry'))
  row[#row + 1] = oldest(q)
  row[#row + 1] = redis.call('HGET', qkey(q, 'm'), 'lim')
  row[#row + 1] = redis.call('HGETALL', qkey(q, 'thr'))
  out[#out + 1] = row
end
return {redis.call('HGET', P .. 'stats', 'rescues') or '0', out}
