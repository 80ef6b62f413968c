-- lib_job.lua: reading and replying jobs, and moving them between states
-- with every index, count and unique key in step.

-- load reads job id's hash into a table, or nil. The table starts sized
-- for a job's usual fields (naming them is only a size hint: Lua sizes a
-- table by its constructor), so filling it never grows it field by field,
-- which cost a rescue 2 % of its work.
local function load(id)
  local flat = redis.call('HGETALL', jkey(id))
  if #flat == 0 then return nil end
  local j = {q = nil, k = nil, s = nil, p = nil, a = nil, ma = nil, to = nil, bb = nil, bm = nil, ra = nil,
    ca = nil, sa = nil, w = nil, t = nil, ex = nil, ai = nil, pl = nil, pk = nil, rc = nil, le = nil, eb = nil, uk = nil}
  for i = 1, #flat, 2 do j[flat[i]] = flat[i + 1] end
  return j
end

-- payload is a job's payload kept in its own key (a large one, field pk),
-- or false: a small one is the hash's field pl.
local function payload(id, j)
  if j.pk then return redis.call('GET', pkey(id)) end
  return false
end

-- reply is a job as the Go side decodes it: id, field/value pairs, payload.
local function reply(id, j)
  local flat = {}
  for k, v in pairs(j) do
    flat[#flat + 1] = k
    flat[#flat + 1] = v
  end
  return {id, flat, payload(id, j)}
end

-- weight is store.JobBytes of a replied job (r is reply's answer): the
-- lengths of its payload, result, metadata, last error, unique key and
-- tags, so that a page stops at the job where Go's budget would.
local function weight(r, j)
  local n = #(r[3] or j.pl or '') + #(j.rs or '') + #(j.md or '{}') + #(j.le or '') + #(j.uk or '')
  if j.tg and j.tg ~= '[]' then
    for _, t in ipairs(cjson.decode(j.tg)) do n = n + #t end
  end
  return n
end

-- save applies changes to the hash and to j; false deletes a field.
local function save(id, j, ch)
  local set, del = {}, {}
  for k, v in pairs(ch) do
    if v == false then
      del[#del + 1] = k
      j[k] = nil
    else
      set[#set + 1] = k
      set[#set + 1] = v
      j[k] = v
    end
  end
  local k = jkey(id)
  if #set > 0 then redis.call('HSET', k, unpack(set)) end
  if #del > 0 then redis.call('HDEL', k, unpack(del)) end
end

local function avscore(j)
  local p = num(j.p)
  if p > 1000 then p = 1000 elseif p < -1000 then p = -1000 end
  local r = num(j.ra)
  if r < 0 then r = 0 elseif r >= BAND then r = BAND - 1 end
  return fmt((1000 - p) * BAND + r)
end


-- Each state has a per-queue sorted set, so a queue's counts are their
-- cardinalities: available by lease order, scheduled by run_at, running by
-- lease expiry, finished by finished_at (for retention).
local SETS = {available = 'av', scheduled = 'sched', running = 'run', succeeded = 'done',
  cancelled = 'cancelled', dead = 'dead'}

local function score(j)
  local s = j.s
  if s == 'available' then return avscore(j) end
  if s == 'scheduled' then return j.ra end
  if s == 'running' then return j.ex end
  return j.fa
end

-- A scheduled job with attempt > 0 is retrying: it is also in the queue's
-- retry set, by run_at, which JobListRetrying reads and whose cardinality
-- is the queue's retrying count. Every state change goes through index
-- and unindex (enqueue writes only attempt 0, lease and ack never touch a
-- scheduled job), so the set is kept here alone.
local function retrying(j) return j.s == 'scheduled' and num(j.a) > 0 end

-- A dead job is also in its queue's dead set of its kind, by finished_at,
-- which JobListDead reads for a kind filter: a kind with few dead jobs
-- among many of other kinds costs a read of its own few entries, not a
-- window of the queue's whole dead set. Like the retry set, it is kept
-- here alone.
local function dkkey(q, k) return qkey(q, 'dk:' .. k) end

-- unindex removes id from the indexes of its state j.s.
-- (Both write through lib_base's write, which a batch defers.)
local function unindex(id, j)
  write('ZREM', qkey(j.q, SETS[j.s]), id)
  if retrying(j) then
    write('ZREM', qkey(j.q, 'retry'), id)
  elseif j.s == 'dead' then
    write('ZREM', dkkey(j.q, j.k), id)
  elseif j.s == 'running' then
    -- A worker left holding nothing stays in holders until orphans.lua
    -- finds it silent: that keeps a SCARD off every settle.
    if j.w then write('SREM', wjkey(j.w), id) end
    ended(j.q, id, j.ck)
  end
end

-- index adds id to the indexes of its state j.s.
local function index(id, j)
  write('ZADD', qkey(j.q, SETS[j.s]), score(j), id)
  if retrying(j) then
    write('ZADD', qkey(j.q, 'retry'), j.ra, id)
  elseif j.s == 'dead' then
    write('ZADD', dkkey(j.q, j.k), score(j), id)
  elseif j.s == 'running' then
    write('SADD', wjkey(j.w), id)
    if j.ck then write('SADD', krkey(j.q, j.ck), id) end
  end
end

-- unique_holder returns the unfinished job holding unique key uk of queue
-- q, if any.
local function unique_holder(q, uk)
  local other = redis.call('GET', ukey(q, uk))
  if not other then return nil end
  local oj = load(other)
  if oj and not FINISHED[oj.s] then return other, oj end
  return nil
end

-- move changes a job's fields and state, keeping every index, count and
-- its unique key in step: a key is held while the job is unfinished.
local function move(id, j, ch)
  local was = FINISHED[j.s]
  unindex(id, j)
  save(id, j, ch)
  index(id, j)
  local fin = FINISHED[j.s]
  if j.uk and was ~= fin then
    if fin then
      if redis.call('GET', ukey(j.q, j.uk)) == id then redis.call('DEL', ukey(j.q, j.uk)) end
    else
      redis.call('SET', ukey(j.q, j.uk), id)
    end
  end
end

-- forget deletes a job that is not running, with its history.
local function forget(id, j)
  unindex(id, j)
  redis.call('ZREM', qkey(j.q, 'ids'), id)
  if j.sc then redis.call('ZREM', sjkey(j.sc), id) end
  if j.uk and not FINISHED[j.s] and redis.call('GET', ukey(j.q, j.uk)) == id then
    redis.call('DEL', ukey(j.q, j.uk))
  end
  redis.call('DEL', jkey(id), pkey(id), akey(id))
end
