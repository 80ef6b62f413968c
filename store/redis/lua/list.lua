-- lib: base job
-- list reads one batch of jobs newest first (ids are time-ordered) below a
-- cursor, from the per-queue id indexes, filtering by state, kind and an id
-- prefix (JobList and the dashboard's JobSearch). ARGV: prefix, queue (''
-- all), state ('' all), kind ('' all), cursor ('' none), batch size,
-- wanted, id prefix ('' any; lower case), byte budget (0 none), schedule
-- ('' all; its jobs are read from its own index, sj:<name>). It examines
-- up to batch ids, stops after the match that spends the budget (lib
-- weight), and replies {matches (at most wanted), the last id examined, 1
-- if no id is left}.
local queue, state, kind, cursor = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local batch, wanted, idp = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local budget = tonumber(ARGV[9])
local sched = ARGV[10] or ''
local indexes = {qkey(queue, 'ids')}
if sched ~= '' then
  indexes = {sjkey(sched)}
elseif queue == '' then
  indexes = {}
  for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do indexes[#indexes + 1] = qkey(q, 'ids') end
end
local from, to = '+', '-'
if idp ~= '' then from, to = '(' .. idp .. '\255', '[' .. idp end
if cursor ~= '' then from = '(' .. cursor end

local cands, full = {}, false
for _, ix in ipairs(indexes) do
  local ids = redis.call('ZREVRANGEBYLEX', ix, from, to, 'LIMIT', 0, batch)
  full = full or #ids == batch
  for _, id in ipairs(ids) do cands[#cands + 1] = id end
end
table.sort(cands, function(a, b) return a > b end)

local out, last = {}, cursor
local examined, used, spent = 0, 0, false
for i = 1, math.min(batch, #cands) do
  if #out >= wanted or spent then break end
  local id = cands[i]
  examined, last = i, id
  local j = load(id)
  if j and (state == '' or j.s == state) and (kind == '' or j.k == kind) and (queue == '' or j.q == queue) then
    local r = reply(id, j)
    out[#out + 1] = r
    used = used + weight(r, j)
    spent = budget > 0 and used >= budget
  end
end
local done = 0
if examined == #cands and not full then done = 1 end
return {out, last, done}
