-- lib_base.lua starts every script: the key prefix (ARGV[1]), key names,
-- number helpers, wake-ups and workers' signs of life. Each script names
-- on its first line the other lib_*.lua parts it needs, which the Go side
-- puts before it: every function defined costs a closure on every call,
-- so the hot scripts (lease, ack) carry only what they use.
--
-- A job is the hash j:<id>; its payload lives in the hash (field pl) when
-- small and in the string p:<id> otherwise (field pk). Owner (w) and token
-- (t) are fields of their own: nothing here ever splits a string on a
-- separator, so worker ids may hold any character. Values written to the
-- hash are strings; numbers are read with num().
local P = ARGV[1]

-- The available set's score is (1000 - priority) * 2^42 + run_at in ms, so
-- the lowest score is the highest priority, then the earliest run_at; equal
-- scores order by member, the id. 2001 priorities times 2^42 ms (year 2109)
-- stay below 2^53, where doubles are exact.
local BAND = 4398046511104

local FINISHED = {succeeded = true, dead = true, cancelled = true}

local function jkey(id) return P .. 'j:' .. id end
local function pkey(id) return P .. 'p:' .. id end
local function akey(id) return P .. 'a:' .. id end
-- qkeys keeps, for one script run, the names qkey built: a script that
-- moves a hundred jobs of one queue builds each of its few names once.
local qkeys = {}
local function qkey(q, s)
  local t = qkeys[q]
  if not t then
    t = {}
    qkeys[q] = t
  end
  local k = t[s]
  if not k then
    k = P .. '{' .. q .. '}:' .. s
    t[s] = k
  end
  return k
end
local function ukey(q, uk) return qkey(q, 'u:' .. uk) end
local function wkey(w) return P .. 'w:' .. w end
local function wjkey(w) return P .. 'wj:' .. w end
local function wlkey(w) return P .. 'wl:' .. w end
local function sjkey(sc) return P .. 'sj:' .. sc end

local function num(v) return tonumber(v) or 0 end

-- fmt writes an integral number without an exponent. A positive integer
-- below 2^53 (a time in ms, a score, a count: nearly every call) goes
-- through '%d', which writes the same digits for less than half the work
-- of '%.0f' (C's printf of a double); anything else, '%.0f' rounds.
local function fmt(n)
  if type(n) == 'number' and n >= 1 and n < 9007199254740992 and n == math.floor(n) then
    return string.format('%d', n)
  end
  return string.format('%.0f', n)
end

-- woken counts the jobs the script made leasable, per queue; 0 stands for
-- "every waiter" (a queue resumed).
local woken = {}

-- wake records that one more job of q is leasable.
local function wake(q)
  if woken[q] ~= 0 then woken[q] = (woken[q] or 0) + 1 end
end

-- wake_all records that every waiter of q should look again.
local function wake_all(q) woken[q] = 0 end

-- wakes tells every replica's waiting leasers, on the wake channel, how
-- many jobs of which queue became leasable ("3:emails", as
-- store.WakeupMessage writes it), once per queue, and returns 1 if it told
-- anything: the second element of every status reply.
local function wakes()
  local any = 0
  for q, n in pairs(woken) do
    redis.call('PUBLISH', P .. 'wake', string.format('%d:%s', n, q))
    any = 1
  end
  woken = {}
  return any
end

-- A batch (recover.lua and reap.lua, which end the deliveries of a
-- hundred jobs a run) defers the writes its jobs share keys for: the queue's state sets, the
-- owner's held set and lost list, the throughput counter. batch_flush then
-- sends one command per key for them all, where each job sent its own:
-- from Lua, a command costs redis-server a few microseconds whatever its
-- size, and those were most of a rescue's commands. Only writes that
-- nothing later in the script reads may be deferred, and a batch never
-- both adds and removes one member of a key (a job's delivery ends once
-- per batch). Outside a batch, each write goes at once.
local batch = nil

local function batch_begin() batch = {order = {}, by = {}} end

-- deferred is the batch's command cmd on key, made at its first use.
local function deferred(cmd, key, ...)
  local by = batch.by[cmd]
  if not by then
    by = {}
    batch.by[cmd] = by
  end
  local e = by[key]
  if not e then
    e = {cmd, key, ...}
    by[key] = e
    batch.order[#batch.order + 1] = e
  end
  return e
end

-- write runs cmd on key with the other arguments (members, or score and
-- member pairs), or defers it to the batch's one command for key.
local function write(cmd, key, a, b)
  if not batch then
    if b == nil then return redis.call(cmd, key, a) end
    return redis.call(cmd, key, a, b)
  end
  local e = deferred(cmd, key)
  e[#e + 1] = a
  if b ~= nil then e[#e + 1] = b end
end

-- TPTTL keeps a minute's throughput counters (tp:<minute>, insights.go)
-- past ThroughputRetention.
local TPTTL = 90000

-- tpkey is the throughput counter of the minute of now (ms).
local function tpkey(now) return P .. 'tp:' .. fmt(math.floor(tonumber(now) / 60000) * 60000) end

-- count_attempt counts one attempt closed at now (ms) with outcome field f
-- ('s' succeeded, 'f' failed or timed out, 'r' orphaned) in its minute's
-- throughput counter, which expires TPTTL seconds after its first count.
local function count_attempt(now, f)
  if batch then
    local n = deferred('HINCRBY', now, {})[3] -- {'HINCRBY', now, counts by field}
    n[f] = (n[f] or 0) + 1
    return
  end
  local tp = tpkey(now)
  if redis.call('HINCRBY', tp, f, 1) == 1 then redis.call('EXPIRE', tp, TPTTL) end
end

-- batch_flush sends the batch's deferred writes, a command per key (in
-- pieces of 1,000 arguments), in the order their keys came, and ends the
-- batch.
local function batch_flush()
  for _, e in ipairs(batch.order) do
    if e[1] == 'HINCRBY' then
      local tp = tpkey(e[2])
      for f, n in pairs(e[3]) do
        if redis.call('HINCRBY', tp, f, n) == n then redis.call('EXPIRE', tp, TPTTL) end
      end
    else
      for i = 3, #e, 1000 do
        redis.call(e[1], e[2], unpack(e, i, math.min(i + 999, #e)))
      end
    end
  end
  batch = nil
end

-- A running job with a concurrency key is also in its key's running set,
-- qkey(q, 'kr:' .. key): the key's running count, kept with the job's
-- state, as the queue's running set keeps the queue's.
local function krkey(q, ck) return qkey(q, 'kr:' .. ck) end

-- slotted caches, for one script run, whether a queue's limits count
-- slots (its meta field 'slots'): a settle or a rescue of a hundred jobs
-- of one queue reads it once. No script both changes limits and ends
-- deliveries.
local slotted = {}

-- ended is where every delivery's end meets (lib_job's unindex of a
-- running job, lib_ack's do_ack): it takes the job (id, of queue q, key ck
-- or nil) out of its key's running set, and when the queue's limits count
-- slots wakes a waiting leaser for the slot freed.
local function ended(q, id, ck)
  if ck then write('SREM', krkey(q, ck), id) end
  local sl = slotted[q]
  if sl == nil then
    sl = redis.call('HEXISTS', qkey(q, 'm'), 'slots') == 1
    slotted[q] = sl
  end
  if sl then wake(q) end
end

-- touch records a sign of life of worker w, registering it if unknown.
local function touch(w, now)
  redis.call('ZADD', P .. 'workers', now, w)
  redis.call('ZADD', P .. 'holders', 'XX', now, w)
  redis.call('HSETNX', wkey(w), 'sa', now)
end

-- optnum reads an optional number argument: '' is none.
local function optnum(v)
  if v == '' then return nil end
  return tonumber(v)
end
