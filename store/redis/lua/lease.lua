-- lib: base
-- lease moves up to max available jobs of the queues to running for a
-- worker, in order of priority (high first), run_at, then id, never from a
-- paused queue, and records the worker's sign of life. ARGV: prefix, now,
-- worker, max, queue count, queues, kind count, kinds, nonce, attempt
-- nonce. Each job's token derives from the nonce, 128 random bits drawn by
-- the caller: SHA-1 keeps one token from telling another. Attempt ids,
-- which are shown to anyone, are the second nonce and a counter. Replies
-- {'ok', 0, jobs}.
local now, w, max = ARGV[2], ARGV[3], tonumber(ARGV[4])
touch(w, now)
local nq = tonumber(ARGV[5])
local nk = tonumber(ARGV[6 + nq])
local kinds = {}
for i = 1, nk do kinds[ARGV[6 + nq + i]] = true end
local nonce, anonce = ARGV[7 + nq + nk], ARGV[8 + nq + nk]

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
  if not seen[q] and max > 0 and not redis.call('HGET', qkey(q, 'm'), 'paused') then
    seen[q] = true
    srcs[#srcs + 1] = {q = q, av = qkey(q, 'av'), buf = {}, pos = 1, off = 0}
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

local cands = {}
while #cands < max do
  local best, bh
  for _, src in ipairs(srcs) do
    local h = head(src)
    if h and (not bh or h[2] < bh[2] or (h[2] == bh[2] and h[1] < bh[1])) then
      best, bh = src, h
    end
  end
  if not best then break end
  best.pos = best.pos + 1
  cands[#cands + 1] = {bh[1], bh[2], best.q}
end

-- The hot path: it writes the job and its indexes directly, as move
-- would, and replies the fields read plus the ones written (the Go side
-- lets a later pair win), so each job costs one read and five writes.
local out = {}
for i = 1, math.min(max, #cands) do
  local id = cands[i][1]
  local flat = redis.call('HGETALL', jkey(id))
  local q, a, to, pk
  for x = 1, #flat, 2 do
    local k = flat[x]
    if k == 'q' then q = flat[x + 1]
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
return {'ok', 0, out}
