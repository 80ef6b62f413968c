-- lib: base
-- nodeprune deletes up to limit nodes last heard from before a cut-off
-- (and entries that are not a node's JSON). The nodes hash holds one field
-- per server replica, a handful. ARGV: prefix, cut-off (ms), limit.
-- Replies how many it deleted. Cost: O(nodes).
local cut, limit, n = num(ARGV[2]), tonumber(ARGV[3]), 0
local nodes = redis.call('HGETALL', P .. 'nodes')
for i = 1, #nodes, 2 do
  if n >= limit then break end
  local ok, node = pcall(cjson.decode, nodes[i + 1])
  if not ok or num(node.h) < cut then
    redis.call('HDEL', P .. 'nodes', nodes[i])
    n = n + 1
  end
end
return n
