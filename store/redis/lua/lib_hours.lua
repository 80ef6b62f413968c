-- lib_hours.lua: each hour of a queue's per-minute history kept summed, so
-- a week's list reads 168 members (per kind), not 10,080. {q}:hr holds the
-- rolled minutes of {q}:min (minutes.lua) scored by the hour: one member
-- per kind ("hour<TAB>kind<TAB>succeeded<TAB>dead<TAB>wait<TAB>run"),
-- counts added and histograms merged. {q}:dh holds the deepest sample of
-- each hour of {q}:depth (depth.lua).
local HOUR = 3600000

-- merge adds (sign 1) or takes away (sign -1) a histogram's text
-- ("bucket:count,...") to or from t; a bucket that comes to 0 goes.
local function merge(t, text, sign)
  for b, c in string.gmatch(text, '(%d+):(%d+)') do
    b = tonumber(b)
    local n = (t[b] or 0) + sign * tonumber(c)
    if n == 0 then n = nil end
    t[b] = n
  end
end

-- histogram writes t as store.Histogram.String does: by bucket.
local function histogram(t)
  local bs = {}
  for b in pairs(t) do bs[#bs + 1] = b end
  table.sort(bs)
  for i, b in ipairs(bs) do bs[i] = string.format('%d:%s', b, fmt(t[b])) end
  return table.concat(bs, ',')
end

-- fields splits a member of {q}:min or {q}:hr into kind, succeeded, dead,
-- wait and run, or nothing for a member it cannot read.
local function fields(m)
  return string.match(m, '^[^\t]*\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)$')
end

-- add adds (sign 1) or takes away (sign -1) the members ms to or from the
-- per-kind sums, creating a kind's sums at its first member.
local function add(sums, kinds, ms, sign)
  for _, m in ipairs(ms) do
    local kind, s, d, w, r = fields(m)
    if kind then
      local k = sums[kind]
      if not k then
        k = {s = 0, d = 0, w = {}, r = {}}
        sums[kind] = k
        kinds[#kinds + 1] = kind
      end
      k.s, k.d = k.s + sign * tonumber(s), k.d + sign * tonumber(d)
      merge(k.w, w, sign)
      merge(k.r, r, sign)
    end
  end
end

-- write_hour replaces queue q's members of the hour with the sums, a
-- kind's left out once nothing of it is left (a rolled minute counts at
-- least one job), and drops the hours wholly older than cutoff (ms).
local function write_hour(q, hour, sums, kinds, cutoff, ttl)
  local hk = qkey(q, 'hr')
  redis.call('ZREMRANGEBYSCORE', hk, hour, hour)
  redis.call('ZREMRANGEBYSCORE', hk, '-inf', cutoff - HOUR)
  for _, kind in ipairs(kinds) do
    local k = sums[kind]
    if k.s + k.d > 0 then
      redis.call('ZADD', hk, hour, table.concat({fmt(hour), kind, fmt(k.s), fmt(k.d), histogram(k.w), histogram(k.r)}, '\t'))
    end
  end
  redis.call('EXPIRE', hk, ttl)
end

-- rewrite_hour writes queue q's members of the hour starting at hour (ms)
-- from that hour's minutes.
local function rewrite_hour(q, hour, cutoff, ttl)
  local sums, kinds = {}, {}
  add(sums, kinds, redis.call('ZRANGEBYSCORE', qkey(q, 'min'), hour, hour + HOUR - 1), 1)
  write_hour(q, hour, sums, kinds, cutoff, ttl)
end

-- note_minute keeps queue q's members of the hour right after one of its
-- minutes was written again: the minute's old members (gone) taken away
-- and its new ones (added) added, reading the hour's members only (one
-- per kind), not its minutes. An hour without members is read from its
-- minutes (rewrite_hour): its first minute, or an hour an earlier version
-- wrote.
local function note_minute(q, hour, gone, added, cutoff, ttl)
  local cur = redis.call('ZRANGEBYSCORE', qkey(q, 'hr'), hour, hour)
  if #cur == 0 then return rewrite_hour(q, hour, cutoff, ttl) end
  local sums, kinds = {}, {}
  add(sums, kinds, cur, 1)
  add(sums, kinds, gone, -1)
  add(sums, kinds, added, 1)
  write_hour(q, hour, sums, kinds, cutoff, ttl)
end

-- rewrite_depth_hour keeps queue q's deepest sample (the earliest of
-- equals) of the hour starting at hour (ms) in the zset {q}:dh, scored by
-- the hour, its member as in {q}:depth ("minute:available:scheduled"), and
-- drops its hours wholly older than cutoff (ms); the key expires ttl
-- seconds after.
local function rewrite_depth_hour(q, hour, cutoff, ttl)
  local best, most = nil, -1
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', qkey(q, 'depth'), hour, hour + HOUR - 1)) do
    local a, s = string.match(m, '^%d+:(%d+):(%d+)$')
    if a and tonumber(a) + tonumber(s) > most then best, most = m, tonumber(a) + tonumber(s) end
  end
  local dk = qkey(q, 'dh')
  redis.call('ZREMRANGEBYSCORE', dk, hour, hour)
  redis.call('ZREMRANGEBYSCORE', dk, '-inf', cutoff - HOUR)
  if best then
    redis.call('ZADD', dk, hour, best)
    redis.call('EXPIRE', dk, ttl)
  end
end

-- note_depth keeps {q}:dh right after queue q's sample of one minute
-- (member "minute:available:scheduled", depth = available + scheduled) is
-- written, reading one member: the hour's deepest changes only if the new
-- sample is deeper (or as deep and earlier). The hour's samples are read
-- whole (rewrite_depth_hour) only for its first sample, and when the
-- minute written already held the hour's deepest and is now shallower (a
-- sample taken again). It drops the hours wholly older than cutoff (ms).
local function note_depth(q, hour, minute, member, depth, cutoff, ttl)
  local dk = qkey(q, 'dh')
  local cur = redis.call('ZRANGEBYSCORE', dk, hour, hour)[1]
  local cm, ca, cs = string.match(cur or '', '^(%d+):(%d+):(%d+)$')
  if not cm then return rewrite_depth_hour(q, hour, cutoff, ttl) end
  cm = tonumber(cm)
  local cd = tonumber(ca) + tonumber(cs)
  if cm == minute and depth < cd then return rewrite_depth_hour(q, hour, cutoff, ttl) end
  if cm == minute or depth > cd or (depth == cd and minute < cm) then
    redis.call('ZREMRANGEBYSCORE', dk, hour, hour)
    redis.call('ZADD', dk, hour, member)
  end
  redis.call('ZREMRANGEBYSCORE', dk, '-inf', cutoff - HOUR)
  redis.call('EXPIRE', dk, ttl)
end
