-- lib: base
-- finished reads one chunk of the jobs of a queue that finished
-- (succeeded or dead) in one minute, from its done or dead set, for
-- kindminute.go, which walks every queue and set a chunk at a time so that
-- no run holds the server long. ARGV: prefix, queue, set ('done' or
-- 'dead'), from ms, to ms (exclusive), offset, count. Replies {kind,
-- state, run_at, started_at or false, finished_at} per job, and the number
-- of entries it walked last.
local q, set, from, to = ARGV[2], ARGV[3], ARGV[4], '(' .. ARGV[5]
local ids = redis.call('ZRANGEBYSCORE', qkey(q, set), from, to, 'LIMIT', tonumber(ARGV[6]), tonumber(ARGV[7]))
local out = {}
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', jkey(id), 'k', 's', 'ra', 'sa', 'fa')
  if f[2] == 'succeeded' or f[2] == 'dead' then
    out[#out + 1] = {f[1], f[2], f[3] or '0', f[4] or false, f[5] or '0'}
  end
end
out[#out + 1] = #ids
return out
