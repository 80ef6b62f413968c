-- lib: base job
-- list reads one batch of jobs newest first (ids are time-ordered) below a
-- cursor, from the per-queue id indexes, filtering by state and kind.
-- ARGV: prefix, queue ('' all), state ('' all), kind ('' all), cursor
-- ('' none), batch size, wanted. It examines up to batch ids and replies
-- {matches (at most wanted), the last id examined, 1 if no id is left}.
local queue, state, kind, cursor = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local batch, wanted = tonumber(ARGV[6]), tonumber(ARGV[7])
local queues = {queue}
if queue == '' then queues = redis.call('SMEMBERS', P .. 'queues') end
local from = '+'
if cursor ~= '' then from = '(' .. cursor end

-- The newest batch ids of all the queues are among each queue's newest
-- batch.
local cands, full = {}, false
for _, q in ipairs(queues) do
  local ids = redis.call('ZREVRANGEBYLEX', qkey(q, 'ids'), from, '-', 'LIMIT', 0, batch)
  full = full or #ids == batch
  for _, id in ipairs(ids) do cands[#cands + 1] = id end
end
table.sort(cands, function(a, b) return a > b end)

local out, last = {}, cursor
local examined = 0
for i = 1, math.min(batch, #cands) do
  if #out >= wanted then break end
  local id = cands[i]
  examined, last = i, id
  local j = load(id)
  if j and (state == '' or j.s == state) and (kind == '' or j.k == kind) then
    out[#out + 1] = reply(id, j)
  end
end
-- A queue that filled its batch may hold more below it.
local done = 0
if examined == #cands and not full then done = 1 end
return {out, last, done}
