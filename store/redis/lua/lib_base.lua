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
local function qkey(q, s) return P .. '{' .. q .. '}:' .. s end
local function ukey(q, uk) return qkey(q, 'u:' .. uk) end
local function wkey(w) return P .. 'w:' .. w end
local function wjkey(w) return P .. 'wj:' .. w end
local function wlkey(w) return P .. 'wl:' .. w end
local function sjkey(sc) return P .. 'sj:' .. sc end

local function num(v) return tonumber(v) or 0 end

-- fmt writes an integral number without an exponent.
local function fmt(n) return string.format('%.0f', n) end

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

-- A running job with a concurrency key is also in its key's running set,
-- qkey(q, 'kr:' .. key): the key's running count, kept with the job's
-- state, as the queue's running set keeps the queue's.
local function krkey(q, ck) return qkey(q, 'kr:' .. ck) end

-- ended is where every delivery's end meets (lib_job's unindex of a
-- running job, lib_ack's do_ack): it takes the job (id, of queue q, key ck
-- or nil) out of its key's running set, and when the queue's limits count
-- slots (its meta field 'slots') wakes a waiting leaser for the slot freed.
local function ended(q, id, ck)
  if ck then redis.call('SREM', krkey(q, ck), id) end
  if redis.call('HEXISTS', qkey(q, 'm'), 'slots') == 1 then wake(q) end
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
