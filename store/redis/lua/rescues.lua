-- lib: base
-- rescues lists recent rescues at or after a time, newest first, from the
-- capped index recover.lua keeps, with each job's queue, kind and state
-- now, for insights.go. ARGV: prefix, since in ms, limit. Replies {entry,
-- queue, kind, state} per rescue of a job that still exists.
local since, limit = ARGV[2], tonumber(ARGV[3])
local out = {}
local offset = 0
while #out < limit do
  local es = redis.call('ZREVRANGEBYSCORE', P .. 'rescues', '+inf', since, 'LIMIT', offset, limit)
  if #es == 0 then break end
  offset = offset + #es
  for _, e in ipairs(es) do
    if #out >= limit then break end
    local id = cjson.decode(e).j
    local r = redis.call('HMGET', jkey(id), 'q', 'k', 's')
    if r[3] then out[#out + 1] = {e, r[1], r[2], r[3]} end
  end
end
return out
