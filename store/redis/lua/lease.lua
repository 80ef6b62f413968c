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

-- Each queue offers its first max candidates (of the kinds); the merge
-- keeps the best max of them all.
local KIND_SCAN = 10000
local cands, seen, offered = {}, {}, 0
for i = 1, nq do
  local q = ARGV[5 + i]
  if not seen[q] and max > 0 and not redis.call('HGET', qkey(q, 'm'), 'paused') then
    seen[q] = true
    local av = qkey(q, 'av')
    local before = #cands
    if nk == 0 then
      local r = redis.call('ZRANGE', av, 0, max - 1, 'WITHSCORES')
      for x = 1, #r, 2 do cands[#cands + 1] = {r[x], tonumber(r[x + 1]), q} end
    else
      -- A kind filter walks the queue in order until it has max matches,
      -- or has looked at KIND_SCAN jobs: a script blocks the whole server,
      -- so a rare kind behind a long backlog of others waits its turn.
      local off, found, chunk = 0, 0, math.max(max, 100)
      while found < max and off < KIND_SCAN do
        local r = redis.call('ZRANGE', av, off, off + chunk - 1, 'WITHSCORES')
        if #r == 0 then break end
        for x = 1, #r, 2 do
          if found < max and kinds[redis.call('HGET', jkey(r[x]), 'k')] then
            cands[#cands + 1] = {r[x], tonumber(r[x + 1]), q}
            found = found + 1
          end
        end
        off = off + chunk
      end
    end
    if #cands > before then offered = offered + 1 end
  end
end
-- One queue's candidates are in order already.
if offered > 1 then
  table.sort(cands, function(a, b)
    if a[2] ~= b[2] then return a[2] < b[2] end
    return a[1] < b[1]
  end)
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
