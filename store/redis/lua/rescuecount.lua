-- lib: base
-- rescuecount counts recent rescues at or after a time by the node that
-- made them, among the newest of the capped index recover.lua keeps, for
-- insights.go. ARGV: prefix, since in ms ('-inf' for any), most entries
-- read. Replies {node, count, node, count, ...}.
local es = redis.call('ZREVRANGEBYSCORE', P .. 'rescues', '+inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local by = {}
for _, e in ipairs(es) do
  local node = cjson.decode(e).rb or ''
  by[node] = (by[node] or 0) + 1
end
local out = {}
for node, n in pairs(by) do
  out[#out + 1] = node
  out[#out + 1] = n
end
return out
