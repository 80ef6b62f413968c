-- lib: base
-- finished reads the jobs that finished (succeeded or dead) in one
-- minute, from every queue's done and dead sets, for kindminute.go. ARGV:
-- prefix, from ms, to ms (exclusive), most jobs read. Replies {queue,
-- kind, state, run_at, started_at or false, finished_at} per job.
local from, to, left = ARGV[2], '(' .. ARGV[3], tonumber(ARGV[4])
local out = {}
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
  for _, set in ipairs({'done', 'dead'}) do
    if left <= 0 then return out end
    local ids = redis.call('ZRANGEBYSCORE', qkey(q, set), from, to, 'LIMIT', 0, left)
    for _, id in ipairs(ids) do
      local f = redis.call('HMGET', jkey(id), 'k', 's', 'ra', 'sa', 'fa')
      if f[2] == 'succeeded' or f[2] == 'dead' then
        out[#out + 1] = {q, f[1], f[2], f[3] or '0', f[4] or false, f[5] or '0'}
        left = left - 1
      end
    end
  end
end
return out
