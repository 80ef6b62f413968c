-- lib: base
-- orphans lists running jobs whose owner's last sign of life is at or
-- before a cut-off, owners named live aside, oldest silence first. It walks
-- only the workers that hold jobs, and each one's set of held ids. ARGV:
-- prefix, cut-off, limit, live owner ids. Replies (id, owner, token, last
-- sign of life) per orphan, flat. Silent workers found holding nothing
-- leave the holders set here. Cost: O(log H + limit + L + the jobs of the
-- holders read), H holders and L the live ids: it reads at most limit
-- silent holders besides the live ones (each holds at least one job, or
-- leaves the set), and stops once it has limit orphans.
local cutoff, limit = ARGV[2], tonumber(ARGV[3])
local live, nlive = {}, 0
for i = 4, #ARGV do
  live[ARGV[i]] = true
  nlive = nlive + 1
end
local out, n = {}, 0
local ws = redis.call('ZRANGEBYSCORE', P .. 'holders', '-inf', cutoff, 'WITHSCORES', 'LIMIT', 0, limit + nlive)
for x = 1, #ws, 2 do
  if n >= limit then break end
  local w, hb = ws[x], ws[x + 1]
  local ids = redis.call('SMEMBERS', wjkey(w))
  if #ids == 0 then
    redis.call('ZREM', P .. 'holders', w) -- holds nothing: settled since
  elseif not live[w] then
    table.sort(ids)
    for _, id in ipairs(ids) do
      if n >= limit then break end
      local r = redis.call('HMGET', jkey(id), 's', 'w', 't')
      if r[1] == 'running' and r[2] == w then
        out[#out + 1] = id
        out[#out + 1] = w
        out[#out + 1] = r[3]
        out[#out + 1] = hb
        n = n + 1
      end
    end
  end
end
return out
