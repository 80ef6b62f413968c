-- lib: base job
-- deadkind puts each job named that is dead now in its queue's dead set of
-- its kind, for deadkindindex.go. ARGV: prefix, queue, job ids. Replies how
-- many of them it put there.
local q = ARGV[2]
local n = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  local f = redis.call('HMGET', jkey(id), 'q', 's', 'k', 'fa')
  if f[1] == q and f[2] == 'dead' then
    redis.call('ZADD', dkkey(q, f[3]), f[4], id)
    n = n + 1
  end
end
return n
