-- lib: base
-- heartbeat records a worker's sign of life (registering it if unknown)
-- and reports what it must stop working on: held jobs with cancellation
-- requested, and lost jobs, each once: those taken from it since its last
-- heartbeat and those it names in flight, unless it holds them now.
-- ARGV: prefix, worker, now, in-flight ids. Replies {cancel, lost}.
local w, now = ARGV[2], ARGV[3]
touch(w, now)
local taken = redis.call('LRANGE', wlkey(w), 0, -1)
redis.call('DEL', wlkey(w))
local holds, cancel = {}, {}
for _, id in ipairs(redis.call('SMEMBERS', wjkey(w))) do
  holds[id] = true
  if redis.call('HGET', jkey(id), 'cr') == '1' then cancel[#cancel + 1] = id end
end
local lost, seen = {}, {}
local function add(id)
  if not holds[id] and not seen[id] then
    seen[id] = true
    lost[#lost + 1] = id
  end
end
for _, id in ipairs(taken) do add(id) end
for i = 4, #ARGV do add(ARGV[i]) end
return {cancel, lost}
