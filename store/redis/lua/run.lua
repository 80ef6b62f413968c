-- lib: base job
-- run makes a scheduled job available now. ARGV: prefix, id, now.
-- Replies {'ok', wakes(), job}, {'nf'} or {'invalid'}.
local id, now = ARGV[2], ARGV[3]
local j = load(id)
if not j then return {'nf', 0} end
if j.s ~= 'scheduled' then return {'invalid', 0} end
move(id, j, {s = 'available', ra = now})
wake(j.q)
return {'ok', wakes(), reply(id, j)}
