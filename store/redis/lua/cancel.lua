-- lib: base job
-- cancel cancels a scheduled or available job at once and requests the
-- cancellation of a running one. ARGV: prefix, id, now. Replies
-- {'ok', 0, job}, {'nf'} or {'invalid'}.
local id, now = ARGV[2], ARGV[3]
local j = load(id)
if not j then return {'nf', 0} end
if j.s == 'scheduled' or j.s == 'available' then
  move(id, j, {s = 'cancelled', fa = now})
elseif j.s == 'running' then
  save(id, j, {cr = '1'})
else
  return {'invalid', 0}
end
return {'ok', 0, reply(id, j)}
