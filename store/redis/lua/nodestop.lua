-- lib: base
-- nodestop marks a server node stopped ("x": when), keeping its entry in
-- the nodes hash until prune.lua drops it with the silent ones; a heartbeat
-- writes the entry anew, without it. ARGV: prefix, node id, now (ms).
local raw = redis.call('HGET', P .. 'nodes', ARGV[2])
if not raw then return 0 end
local ok, node = pcall(cjson.decode, raw)
if not ok then return 0 end
node.x = tonumber(ARGV[3])
redis.call('HSET', P .. 'nodes', ARGV[2], cjson.encode(node))
return 1
