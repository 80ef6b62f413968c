-- lib: base
-- lease moves up to max available jobs of the queues to running for a
-- worker, in order of priority (high first), run_at, then id, never from a
-- paused queue, within the queues' limits, and records the worker's sign
-- of life. ARGV: prefix, now, worker, max, queue count, queues, kind
-- count, kinds, nonce, attempt nonce, now in microseconds. Each job's
-- token derives from the nonce, 128 random bits drawn by the caller: SHA-1
-- keeps one token from telling another. Attempt ids, which are shown to
-- anyone, are the second nonce and a counter. Replies {'ok', 0, jobs,
-- wake-ups}: (queue, microseconds) pairs, when a rate that held a job
-- back refills.
local now, w, max = ARGV[2], ARGV[3], tonumber(ARGV[4])
touch(w, now)
local nq = tonumber(ARGV[5])
local nk = tonumber(ARGV[6 + nq])
local kinds = {}
for i = 1, nk do kinds[ARGV[6 + nq + i]] = true end
local nonce, anonce = ARGV[7 + nq + nk], ARGV[8 + nq + nk]
local now_us = tonumber(ARGV[9 + nq + nk])

-- A queue with limits (its meta field 'lim', store.Limits as JSON) passes
-- its candidates through a gate, which mirrors store.Gate: the same
-- budget, GCRA and key rules, so every backend lets the same jobs through.
-- The merge below offers it candidates in lease order; a candidate it
-- refuses is passed over, not touched, and those behind it still offered.
-- Slots are counted from job state: the queue's running set and each
-- key's (krkey).

-- rate reads a store.Rate's JSON (period in ns) as its GCRA interval and
-- tolerance in microseconds (store.Rate.Interval, Tolerance).
local function rate(r)
  if not r then return nil end
  local p, n = math.floor(r.period / 1000), r.limit
  local iv = math.floor((p + n - 1) / n)
  return {iv = iv, tol = (r.burst or 0) * iv}
end

-- take is store.Rate.Take: the next tat, or nil when a start now does not
-- conform.
local function take(r, tat)
  local t = math.max(tat, now_us)
  if t - r.tol > now_us then return nil end
  return t + r.iv
end

local function ready(r, tat) return math.max(now_us, tat - r.tol) end

local function allowance(r, tat)
  local room = now_us + r.tol - math.max(tat, now_us)
  if room < 0 then return 0 end
  return math.min(math.floor(room / r.iv) + 1, 1000001)
end

local function gate_new(q, lim, tat)
  local g = {q = q, kc = lim.key_concurrency, rate = rate(lim.rate), krate = rate(lim.key_rate), tat = tat,
    krun = {}, taken = {}, ktat = {}, kmoved = {}, thr = {}, bound = {}, skipped = 0}
  local room, allow = max, max
  if lim.concurrency then room = math.max(lim.concurrency - redis.call('ZCARD', qkey(q, 'run')), 0) end
  if g.rate then allow = allowance(g.rate, tat) end
  local least = math.min(max, room, allow)
  if room == least and room < max then g.bound[#g.bound + 1] = 'concurrency' end
  if allow == least and allow < max then g.bound[#g.bound + 1] = 'rate' end
  g.budget = least
  return g
end

local function wake_at(g, at)
  if not g.wake or at < g.wake then g.wake = at end
end

-- admit is store.Gate.Admit for job id.
local function admit(g, id)
  local key = false
  if g.kc or g.krate then key = redis.call('HGET', jkey(id), 'ck') end
  if key then
    if g.kc then
      if not g.krun[key] then g.krun[key] = redis.call('SCARD', krkey(g.q, key)) end
      if g.krun[key] + (g.taken[key] or 0) >= g.kc then
        g.thr.key_concurrency = true
        return false
      end
    end
    if g.krate then
      if not g.ktat[key] then g.ktat[key] = num(redis.call('HGET', qkey(g.q, 'kt'), key)) end
      local nx = take(g.krate, g.ktat[key])
      if not nx then
        g.thr.key_rate = true
        wake_at(g, ready(g.krate, g.ktat[key]))
        return false
      end
      g.ktat[key], g.kmoved[key] = nx, true
    end
    g.taken[key] = (g.taken[key] or 0) + 1
  end
  if g.rate then g.tat, g.tatmoved = take(g.rate, g.tat) or g.tat, true end
  g.budget = g.budget - 1
  return true
end

-- Each queue offers its candidates in order, a chunk at a time, and the
-- merge takes the best head until it has max: a lease reads about max
-- entries however many queues it names (taking each queue's first max
-- and sorting them all read and sorted max per queue). A queue's first
-- chunk is its even share, plus one; a queue that offers more than that
-- doubles its chunk at each refill.
-- A kind filter walks a queue in order, keeping the matches, until it has
-- looked at KIND_SCAN jobs: a script blocks the whole server, so a rare
-- kind behind a long backlog of others waits its turn.
local KIND_SCAN = 10000
local srcs, seen = {}, {}
for i = 1, nq do
  local q = ARGV[5 + i]
  local m = (not seen[q] and max > 0) and redis.call('HMGET', qkey(q, 'm'), 'paused', 'lim', 'tat')
  if m and not m[1] then
    seen[q] = true
    local src = {q = q, av = qkey(q, 'av'), buf = {}, pos = 1, off = 0}
    if m[2] then src.gate = gate_new(q, cjson.decode(m[2]), num(m[3])) end
    srcs[#srcs + 1] = src
  end
end
local chunk = math.ceil(max / math.max(#srcs, 1)) + 1
if nk > 0 then chunk = math.max(max, 100) end
for _, src in ipairs(srcs) do src.chunk = chunk end

-- head returns src's next candidate, {id, score}, reading a chunk when its
-- buffer is spent; nil once the queue has no more.
local function head(src)
  while src.pos > #src.buf and not src.done do
    local r = redis.call('ZRANGE', src.av, src.off, src.off + src.chunk - 1, 'WITHSCORES')
    src.off = src.off + src.chunk
    src.done = #r < 2 * src.chunk or (nk > 0 and src.off >= KIND_SCAN)
    src.chunk = math.min(src.chunk * 2, math.max(max, 100))
    src.buf, src.pos = {}, 1
    for x = 1, #r, 2 do
      if nk == 0 or kinds[redis.call('HGET', jkey(r[x]), 'k')] then
        src.buf[#src.buf + 1] = {r[x], tonumber(r[x + 1])}
      end
    end
  end
  return src.buf[src.pos]
end

-- offers tells whether src may offer more: a gate out of budget closes it,
-- and so does one that passed over KIND_SCAN jobs (a flood of full keys
-- waits its turn, like a rare kind).
local function offers(src)
  local g = src.gate
  return not g or (g.budget > 0 and g.skipped < KIND_SCAN)
end

local cands = {}
while #cands < max do
  local best, bh
  for _, src in ipairs(srcs) do
    local h = offers(src) and head(src)
    if h and (not bh or h[2] < bh[2] or (h[2] == bh[2] and h[1] < bh[1])) then
      best, bh = src, h
    end
  end
  if not best then break end
  best.pos = best.pos + 1
  if not best.gate or admit(best.gate, bh[1]) then
    cands[#cands + 1] = {bh[1], bh[2], best.q}
  else
    best.gate.skipped = best.gate.skipped + 1
  end
end

-- Each gate writes back the rate state its starts moved and counts the
-- limits that held jobs back (store.Gate.Done: a budget spent on a limit
-- with jobs still waiting).
local wakeups = {}
for _, src in ipairs(srcs) do
  local g = src.gate
  if g then
    if g.budget <= 0 and head(src) then
      for _, r in ipairs(g.bound) do
        g.thr[r] = true
        if r == 'rate' then wake_at(g, ready(g.rate, g.tat)) end
      end
    end
    local m = qkey(g.q, 'm')
    if g.tatmoved then redis.call('HSET', m, 'tat', fmt(g.tat)) end
    -- The key rates' states expire with the latest of them, plus
    -- store.KeyRateSlack: a state past its tat reads as none.
    local kt, last = qkey(g.q, 'kt'), 0
    for k in pairs(g.kmoved) do
      redis.call('HSET', kt, k, fmt(g.ktat[k]))
      last = math.max(last, g.ktat[k])
    end
    if last > 0 then
      local ttl = math.ceil((last - now_us) / 1000) + 60000
      if redis.call('PTTL', kt) < ttl then redis.call('PEXPIRE', kt, ttl) end
    end
    for r in pairs(g.thr) do redis.call('HINCRBY', qkey(g.q, 'thr'), r, 1) end
    if g.wake then wakeups[#wakeups + 1], wakeups[#wakeups + 2] = g.q, fmt(g.wake) end
  end
end

-- The hot path: it writes the job and its indexes directly, as move
-- would, and replies the fields read plus the ones written (the Go side
-- lets a later pair win), so each job costs one read and five writes.
local out = {}
for i = 1, math.min(max, #cands) do
  local id = cands[i][1]
  local flat = redis.call('HGETALL', jkey(id))
  local q, a, to, pk, ck
  for x = 1, #flat, 2 do
    local k = flat[x]
    if k == 'q' then q = flat[x + 1]
    elseif k == 'ck' then ck = flat[x + 1]
    elseif k == 'a' then a = flat[x + 1]
    elseif k == 'to' then to = flat[x + 1]
    elseif k == 'pk' then pk = true end
  end
  if not q then
    -- Cannot happen (a job leaves its sets before its hash goes); never
    -- fail halfway through a lease over it.
    redis.call('ZREM', qkey(cands[i][3], 'av'), id)
  else
    local token = string.sub(redis.sha1hex('t' .. nonce .. i), 1, 32)
    local aid = anonce .. string.format('%04x', i)
    local ex = fmt(num(now) + num(to))
    a = fmt(num(a) + 1)
    redis.call('ZREM', qkey(q, 'av'), id)
    redis.call('HSET', jkey(id), 's', 'running', 'a', a, 'w', w, 't', token, 'ai', aid, 'sa', now, 'ex', ex)
    redis.call('ZADD', qkey(q, 'run'), ex, id)
    redis.call('SADD', wjkey(w), id)
    if ck then redis.call('SADD', krkey(q, ck), id) end
    local n = #flat
    flat[n + 1], flat[n + 2], flat[n + 3], flat[n + 4] = 's', 'running', 'a', a
    flat[n + 5], flat[n + 6], flat[n + 7], flat[n + 8] = 'w', w, 't', token
    flat[n + 9], flat[n + 10], flat[n + 11], flat[n + 12] = 'ai', aid, 'sa', now
    flat[n + 13], flat[n + 14] = 'ex', ex
    local pl = false
    if pk then pl = redis.call('GET', pkey(id)) end
    out[#out + 1] = {id, flat, pl}
  end
end
if #out > 0 then redis.call('ZADD', P .. 'holders', now, w) end
return {'ok', 0, out, wakeups}
