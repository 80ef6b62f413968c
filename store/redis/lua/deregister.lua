-- lib: base job end
-- deregister removes a worker and releases every job it holds at once
-- (attempt - 1): O(its jobs). ARGV: prefix, worker, now. Replies
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
return {'ok', wakes()}
