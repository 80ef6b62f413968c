-- lib: base job
-- reindex puts each job named in its queue's retry set if it is retrying
-- now, and takes it out otherwise, for retryindex.go. ARGV: prefix, queue,
-- job ids. Replies how many of them are in the set.
local q = ARGV[2]
local n = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  local f = redis.call('HMGET', jkey(id), 'q', 's', 'a', 'ra')
  if f[1] == q and retrying({s = f[2], a = f[3]}) then
    redis.call('ZADD', qkey(q, 'retry'), f[4], id)
    n = n + 1
  else
    redis.call('ZREM', qkey(q, 'retry'), id)
  end
end
return n
