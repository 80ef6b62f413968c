-- lib: base job end
-- deregister removes a worker and releases every job it holds at once
-- (attempt - 1), and ends its long-polls on every replica: O(its jobs).
-- ARGV: prefix, worker, now. Replies
-- {'ok', wakes()} or {'nf', 0}.
local w, now = ARGV[2], ARGV[3]
if not redis.call('ZSCORE', P .. 'workers', w) then return {'nf', 0} end
for _, id in ipairs(redis.call('SMEMBERS', wjkey(w))) do
  local j = load(id)
  if j and j.s == 'running' and j.w == w then
    end_delivery(id, j, decide(j, 'release', nil, 0, num(now), 0), now, 'deregister', nil)
  end
end
redis.call('DEL', wkey(w), wjkey(w), wlkey(w))
redis.call('ZREM', P .. 'workers', w)
redis.call('ZREM', P .. 'holders', w)
-- Its long-polls end on every replica (store.WorkerEnded, with n 0).
redis.call('PUBLISH', P .. 'wake', '0:worker ended ' .. w)
return {'ok', wakes()}
