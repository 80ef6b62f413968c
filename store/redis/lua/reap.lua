-- lib: base job end
-- reap ends a chunk of running jobs past their expiry as timed_out, each
-- if it still is (an extend may have come in since the listing). ARGV:
-- prefix, now, the message (store.ReapMessage), then two per job: id,
-- jitter. Replies {'ok', wakes(), job, ...} with the jobs it ended. Like
-- recover.lua, a chunk (store/redis/reap.go) pays the script's fixed cost
-- once for all its jobs and sends one command per shared key for them all
-- (a batch, lib_base). Cost: O(chunk × (log N + the job's fields)).
local now = ARGV[2]
local out = {'ok', 0}
batch_begin()
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  local j = load(id)
  if j and j.s == 'running' and num(j.ex) <= num(now) then
    local d = decide(j, 'timeout', nil, 0, num(now), tonumber(ARGV[i + 1]))
    end_delivery(id, j, d, now, 'reap', {err = ARGV[3], lost = true})
    out[#out + 1] = reply(id, j)
  end
end
batch_flush()
out[2] = wakes()
return out
