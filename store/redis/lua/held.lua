-- lib: base job
-- held lists running jobs whose owner's last sign of life is strictly
-- before a cut-off, owners named live aside, longest silent owner first,
-- for insights.go. ARGV: prefix, cut-off, limit, live owner ids. Replies
-- {job, owner's last sign of life} per job.
local cutoff, limit = ARGV[2], tonumber(ARGV[3])
local live = {}
for i = 4, #ARGV do live[ARGV[i]] = true end
local out = {}
local ws = redis.call('ZRANGEBYSCORE', P .. 'holders', '-inf', '(' .. cutoff, 'WITHSCORES')
for x = 1, #ws, 2 do
  if #out >= limit then break end
  local w, hb = ws[x], ws[x + 1]
  if not live[w] then
    local ids = redis.call('SMEMBERS', wjkey(w))
    table.sort(ids)
    for _, id in ipairs(ids) do
      if #out >= limit then break end
      local j = load(id)
      if j and j.s == 'running' and j.w == w then out[#out + 1] = {reply(id, j), hb} end
    end
  end
end
return out
