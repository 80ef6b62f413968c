-- lib: base job
-- zpage reads one batch of a per-queue sorted set of jobs (dead or dead of
-- one kind by finished_at, newest first; retry by run_at, soonest first)
-- for insights.go, filtering by kind and dead reason. ARGV: prefix, set
-- suffix, '1' for descending, queue ('' all), cursor score ('' none),
-- cursor id, batch size, wanted, kind ('' any), dead reason ('' any), '1'
-- to keep only retrying jobs (scheduled, attempt > 0: what the retry set
-- holds, checked again on the job), byte budget (0 none; list.lua stops on
-- it alike), state ('' any: the state the set holds, checked again on the
-- job). It examines up to batch entries after the cursor (score, then id)
-- and replies {matches (at most wanted), last score, last id, 1 if no entry
-- is left}.
local suffix, desc, queue = ARGV[2], ARGV[3] == '1', ARGV[4]
local cscore, cid = ARGV[5], ARGV[6]
local batch, wanted = tonumber(ARGV[7]), tonumber(ARGV[8])
local kind, reason, retries = ARGV[9], ARGV[10], ARGV[11] == '1'
local budget, state = tonumber(ARGV[12]), ARGV[13]
local queues = {queue}
if queue == '' then queues = redis.call('SMEMBERS', P .. 'queues') end

-- after tells whether (s, id) comes after the cursor in the list's order.
local cs = tonumber(cscore)
local function after(s, id)
  if not cs then return true end
  if s ~= cs then
    if desc then return s < cs end
    return s > cs
  end
  if desc then return id < cid end
  return id > cid
end

local function before(a, b)
  if a.s ~= b.s then
    if desc then return a.s > b.s end
    return a.s < b.s
  end
  if desc then return a.id > b.id end
  return a.id < b.id
end

-- more tells whether key holds an entry after member id in the list's order.
local function more(key, id)
  local rank = redis.call('ZRANK', key, id)
  if desc then return rank > 0 end
  return rank < redis.call('ZCARD', key) - 1
end

-- Each queue gives its entries after the cursor, up to a batch read (more
-- while a batch holds only ties before the cursor). Past the last entry read
-- of a queue that has more, another of its entries might come first: the
-- merged list is examined only up to the earliest such entry. A queue whose
-- batch ended exactly at its last entry has none: the list may end there,
-- with no empty page after it.
local cands, horizon = {}, nil
for _, q in ipairs(queues) do
  local key = qkey(q, suffix)
  local offset, kept, r = 0, 0, nil
  repeat
    if desc then
      r = redis.call('ZREVRANGEBYSCORE', key, cscore ~= '' and cscore or '+inf', '-inf', 'WITHSCORES', 'LIMIT', offset, batch)
    else
      r = redis.call('ZRANGEBYSCORE', key, cscore ~= '' and cscore or '-inf', '+inf', 'WITHSCORES', 'LIMIT', offset, batch)
    end
    offset = offset + batch
    for i = 1, #r, 2 do
      local s = tonumber(r[i + 1])
      if after(s, r[i]) then
        cands[#cands + 1] = {id = r[i], s = s}
        kept = kept + 1
      end
    end
  until kept > 0 or #r < 2 * batch
  if #r == 2 * batch and more(key, r[#r - 1]) then
    local last = {id = r[#r - 1], s = tonumber(r[#r])}
    if not horizon or before(last, horizon) then horizon = last end
  end
end
table.sort(cands, before)

local out, lscore, lid = {}, cscore, cid
local examined, used, spent = 0, 0, false
for i = 1, #cands do
  if #out >= wanted or i > batch or spent then break end
  local c = cands[i]
  if horizon and before(horizon, c) then break end
  examined, lscore, lid = i, fmt(c.s), c.id
  local j = load(c.id)
  if j and (kind == '' or j.k == kind) and (reason == '' or j.dr == reason)
      and (state == '' or j.s == state) and (not retries or retrying(j)) then
    local r = reply(c.id, j)
    out[#out + 1] = r
    used = used + weight(r, j)
    spent = budget > 0 and used >= budget
  end
end
local done = 0
if examined == #cands and not horizon then done = 1 end
return {out, lscore, lid, done}
